import { taskStreamId } from '@app/common';
import type { EventStore } from '@app/event-store';
import type { WebhookOutbox } from './task-webhook-outbox';
import { TaskWebhookOutbox } from './task-webhook-outbox';
import { webhookStreamId } from '../deliveries/delivery.events';

/** Reads a task's outbox from the store: both streams, decoded (never cast). */
export async function readWebhookOutbox(store: EventStore, taskId: string): Promise<WebhookOutbox> {
  return (await readTaskWebhookOutbox(store, taskId)).outbox;
}

/** Reads both streams of a task's outbox into a state that the store's feed can then keep up to date. */
export async function readTaskWebhookOutbox(store: EventStore, taskId: string): Promise<TaskWebhookOutbox> {
  const [taskEvents, recorded] = await Promise.all([store.readStream(taskStreamId(taskId)), store.readStream(webhookStreamId(taskId))]);
  const outbox = new TaskWebhookOutbox(taskId);
  for (const event of [...taskEvents, ...recorded]) outbox.apply(event);
  return outbox;
}
