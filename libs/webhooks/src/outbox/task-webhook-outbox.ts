import { taskIdOf } from '@app/common';
import type { ExpectedRevision, StoredEvent } from '@app/event-store';
import type { SealedSecrets, TaskEvent } from '@app/task-domain';
import { toTaskEvent } from '@app/task-domain';
import { toWebhookDeliveryEvent } from '../deliveries/delivery-event.decoder';
import type { WebhookDeliveryEvent } from '../deliveries/delivery.events';
import { taskIdOfWebhookStream } from '../deliveries/delivery.events';
import type { TaskEventAt, WebhookMessageSpec } from './webhook-messages';
import { mayMakeWebhookDue, webhookMessagesAfter } from './webhook-messages';

/** A task's webhook outbox as the store holds it: the messages its history made due and every claim and attempt so far. */
export interface WebhookOutbox {
  readonly messages: readonly WebhookMessageSpec[];
  /** The task's delivery events (claims and outcomes), oldest first. */
  readonly deliveryEvents: readonly WebhookDeliveryEvent[];
  /** The revision of the task's delivery stream that was read: the expected revision of the next claim's append. */
  readonly deliveryRevision: number;
  /** The task's secrets as stored, to redact the messages with; absent for an unknown task or one without a webhook URL. */
  readonly secrets?: { readonly secretNames: readonly string[]; readonly sealedSecrets?: SealedSecrets };
  /** The operator's WEBHOOK_URL when the task's messages go there: never shown to the tenant (maskOperatorUrl). */
  readonly operatorUrl?: string;
}

/** The expected revision of the next append to the task's delivery stream, as `outbox` read it. */
export const expectedDeliveryRevision = (outbox: WebhookOutbox): ExpectedRevision =>
  outbox.deliveryRevision === 0 ? 'no_stream' : outbox.deliveryRevision;

/**
 * What applying one stored event did: `changed` the outbox (a message became due, or a claim,
 * outcome or redelivery was recorded), left it `unchanged` (an event that makes nothing due), was
 * already `known` (at or below the revision held: applied before, e.g. from the append's own
 * result), or found a `gap` (an earlier event of the stream is missing, so this state is not the
 * store's and must be read again).
 */
export type AppliedOutcome = 'changed' | 'unchanged' | 'known' | 'gap';

/** What the outbox needs of a task's TaskCreated (not its prompt, files or environment). */
interface CreatedWithWebhook {
  readonly url: string;
  readonly urlIsDefault: boolean;
  readonly secrets: NonNullable<WebhookOutbox['secrets']>;
}

/**
 * One task's webhook outbox, built from its two streams' events applied in revision order: the
 * same result as reading both streams (readWebhookOutbox builds it this way), but it can also be
 * kept up to date from the store's feed, one event at a time, without reading anything. Only what
 * the outbox needs is kept: of TaskCreated the webhook URL and the secrets, the events that may
 * make a message due, and the delivery events; every other task event only moves the revision on.
 * A task without a webhook URL keeps nothing but its revisions.
 */
export class TaskWebhookOutbox {
  /** Undefined until revision 1 is applied; null for a task without a webhook URL (or not created by TaskCreated). */
  private created?: CreatedWithWebhook | null;
  private readonly triggers: TaskEventAt[] = [];
  private taskRevision = 0;
  private readonly deliveryEvents: WebhookDeliveryEvent[] = [];
  private deliveryRevision = 0;
  private snapshot?: WebhookOutbox;

  constructor(readonly taskId: string) {}

  /** `event` of this task's stream or of its delivery stream. */
  apply(event: StoredEvent): AppliedOutcome {
    if (taskIdOf(event.streamId) === this.taskId) return this.applyTaskEvent(event);
    if (taskIdOfWebhookStream(event.streamId) === this.taskId) return this.applyDeliveryEvent(event);
    throw new Error(`${event.streamId} is not a stream of ${this.taskId}'s outbox`);
  }

  /** Whether the task has no webhook URL, so that no event of it can ever make a message due. */
  get withoutWebhook(): boolean {
    return this.created === null;
  }

  /** Whether this holds every event `other` holds (both are built from revision 1 with no gap, so holding as far is holding the same). */
  covers(other: TaskWebhookOutbox): boolean {
    return this.taskRevision >= other.taskRevision && this.deliveryRevision >= other.deliveryRevision;
  }

  get outbox(): WebhookOutbox {
    this.snapshot ??= this.build();
    return this.snapshot;
  }

  private applyTaskEvent(stored: StoredEvent): AppliedOutcome {
    const order = this.inOrder(stored.revision, this.taskRevision);
    if (order !== 'next') return order;
    // Decoded whatever it is (never cast), as a read of the stream would: an unknown event is refused loudly.
    const event = toTaskEvent(stored);
    this.taskRevision = stored.revision;
    if (stored.revision === 1) {
      this.created = createdWithWebhook(event);
    } else if (this.withoutWebhook || !mayMakeWebhookDue(event)) {
      return 'unchanged';
    } else {
      this.triggers.push({ event, revision: stored.revision, recordedAt: stored.recordedAt });
    }
    this.snapshot = undefined;
    return 'changed';
  }

  private applyDeliveryEvent(stored: StoredEvent): AppliedOutcome {
    const order = this.inOrder(stored.revision, this.deliveryRevision);
    if (order !== 'next') return order;
    this.deliveryEvents.push(toWebhookDeliveryEvent(stored));
    this.deliveryRevision = stored.revision;
    this.snapshot = undefined;
    return 'changed';
  }

  private inOrder(revision: number, held: number): 'next' | 'known' | 'gap' {
    if (revision <= held) return 'known';
    return revision === held + 1 ? 'next' : 'gap';
  }

  private build(): WebhookOutbox {
    const delivery = { deliveryEvents: [...this.deliveryEvents], deliveryRevision: this.deliveryRevision };
    // No webhook URL, no message: the secrets, only ever needed to redact messages, are not kept either.
    if (!this.created) return { messages: [], ...delivery };
    return {
      // The events left out make no message, so the messages are those of the whole stream.
      messages: webhookMessagesAfter(this.taskId, this.created.url, this.triggers),
      ...delivery,
      secrets: this.created.secrets,
      ...(this.created.urlIsDefault ? { operatorUrl: this.created.url } : {}),
    };
  }
}

/** The webhook URL and secrets of a TaskCreated that has a webhook URL; null otherwise. */
function createdWithWebhook(event: TaskEvent): CreatedWithWebhook | null {
  if (event.type !== 'TaskCreated' || event.data.webhookUrl === undefined) return null;
  const { secretNames, sealedSecrets, webhookUrl, webhookUrlIsDefault } = event.data;
  return {
    url: webhookUrl,
    urlIsDefault: webhookUrlIsDefault === true && webhookUrl !== '',
    secrets: { secretNames, ...(sealedSecrets ? { sealedSecrets } : {}) },
  };
}
