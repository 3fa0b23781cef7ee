import { taskStreamId } from '@app/common';
import type { EventStore } from '@app/event-store';
import { SealedSecrets, TaskEvent, toTaskEvent } from '@app/task-domain';
import { WebhookDeliveryEvent, toWebhookDeliveryEvent, webhookStreamId } from './webhook-delivery.events';
import { WebhookMessageSpec, webhookMessagesOf } from './webhook-messages';

/** A task's webhook outbox as the store holds it: the messages its history made due and every claim and attempt so far. */
export interface WebhookOutbox {
  readonly messages: readonly WebhookMessageSpec[];
  /** The task's delivery events (claims and outcomes), oldest first. */
  readonly deliveryEvents: readonly WebhookDeliveryEvent[];
  /** The revision of the task's delivery stream that was read: the expected revision of the next claim's append. */
  readonly deliveryRevision: number;
  /** The task's secrets as stored, to redact the messages with; absent for an unknown task. */
  readonly secrets?: { readonly secretNames: readonly string[]; readonly sealedSecrets?: SealedSecrets };
  /** The operator's WEBHOOK_URL when the task's messages go there: never shown to the tenant (maskOperatorUrl). */
  readonly operatorUrl?: string;
}

/** Reads a task's outbox from the store: both streams, decoded (never cast). */
export async function readWebhookOutbox(store: EventStore, taskId: string): Promise<WebhookOutbox> {
  const [taskEvents, recorded] = await Promise.all([store.readStream(taskStreamId(taskId)), store.readStream(webhookStreamId(taskId))]);
  const events = taskEvents.map((e) => ({ event: toTaskEvent(e), revision: e.revision, recordedAt: e.recordedAt }));
  const created: TaskEvent | undefined = events[0]?.event;
  const secrets =
    created?.type === 'TaskCreated'
      ? { secretNames: created.data.secretNames, ...(created.data.sealedSecrets ? { sealedSecrets: created.data.sealedSecrets } : {}) }
      : undefined;
  return {
    messages: webhookMessagesOf(taskId, events),
    deliveryEvents: recorded.map(toWebhookDeliveryEvent),
    deliveryRevision: recorded.at(-1)?.revision ?? 0,
    ...(secrets ? { secrets } : {}),
    ...(created?.type === 'TaskCreated' && created.data.webhookUrlIsDefault && created.data.webhookUrl
      ? { operatorUrl: created.data.webhookUrl }
      : {}),
  };
}
