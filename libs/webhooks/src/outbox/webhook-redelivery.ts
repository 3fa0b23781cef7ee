import { ConflictError, NotFoundError } from '@app/common';
import { EventStore, ExpectedRevisionConflictError } from '@app/event-store';
import { MAX_REDELIVERIES_PER_MESSAGE } from '../deliveries/delivery.decider';
import { deliveryOf, WebhookDelivery } from './webhook-deliveries.projection';
import {
  WEBHOOK_EVENT_SCHEMA_VERSION,
  WEBHOOK_REDELIVERY_REQUESTED,
  WebhookRedeliveryRequestedData,
  webhookStreamId,
} from '../deliveries/delivery.events';
import { readWebhookOutbox } from './webhook-outbox.reader';
import { maskOperatorUrl } from './operator-url-mask';

/** Appends lost to another message's delivery events before this gives up; each is a fresh read. */
const MAX_TRIES = 5;

/**
 * Starts a new round of attempts of a task's delivered or failed message (the replay of a missed
 * message): a WebhookRedeliveryRequested event in the task's delivery stream, appended with the
 * revision that was read, so the decision "not pending" holds when it lands. Any dispatcher sees
 * the append and attempts the message at once. A concurrent redelivery of the same message makes
 * this one find it pending: one round, never two. The caller has checked the task's tenant.
 * Returns the message's delivery as recorded after the request (pending, earlier attempts listed).
 */
export async function requestWebhookRedelivery(
  store: EventStore,
  taskId: string,
  messageId: string,
  now: () => Date = () => new Date(),
): Promise<WebhookDelivery> {
  // The redeliveries the first read found: one requested after it (a concurrent request that won
  // the append) answers this one, even when its round has already ended by the time this re-reads.
  let redeliveriesFirstSeen: number | undefined;
  for (let tries = 1; ; tries++) {
    const outbox = await readWebhookOutbox(store, taskId);
    const message = outbox.messages.find((m) => m.id === messageId);
    if (!message) throw new NotFoundError(`webhook delivery ${messageId}`);
    const shown = { id: message.id, type: message.payload.type };
    const ownEvents = outbox.deliveryEvents.filter((e) => e.data.messageId === messageId);
    const redeliveries = ownEvents.filter((e) => e.type === WEBHOOK_REDELIVERY_REQUESTED).length;
    redeliveriesFirstSeen ??= redeliveries;
    if (redeliveries >= MAX_REDELIVERIES_PER_MESSAGE) {
      throw new ConflictError(`webhook delivery ${messageId} has been redelivered ${redeliveries} times, the most one message can be`);
    }
    if (deliveryOf(shown, ownEvents).status === 'pending') {
      throw new ConflictError(
        `webhook delivery ${messageId} is still pending (being attempted or retried, or a redelivery was already requested): ` +
          'only a delivered or failed message can be redelivered',
      );
    }
    if (redeliveries > redeliveriesFirstSeen) {
      throw new ConflictError(
        `webhook delivery ${messageId}: a redelivery requested at the same time went ahead (its round may have ended already)`,
      );
    }
    const request: WebhookRedeliveryRequestedData = { messageId, type: message.payload.type, at: now().toISOString() };
    const event = { type: WEBHOOK_REDELIVERY_REQUESTED, data: request, schemaVersion: WEBHOOK_EVENT_SCHEMA_VERSION };
    try {
      await store.appendToStream(webhookStreamId(taskId), [event], outbox.deliveryRevision === 0 ? 'no_stream' : outbox.deliveryRevision);
      const delivery = deliveryOf(shown, [...ownEvents, { type: WEBHOOK_REDELIVERY_REQUESTED, data: request }]);
      return outbox.operatorUrl === undefined ? delivery : maskOperatorUrl(delivery, outbox.operatorUrl);
    } catch (error) {
      // Something else was appended meanwhile (this or another message's attempt, a redelivery): read again.
      if (!(error instanceof ExpectedRevisionConflictError) || tries >= MAX_TRIES) throw error;
    }
  }
}
