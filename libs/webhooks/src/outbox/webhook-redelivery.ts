import type { EventStore } from '@app/event-store';
import { ExpectedRevisionConflictError } from '@app/event-store';
import { decideDelivery } from '../deliveries/delivery.decider';
import { toNewWebhookEvents, webhookStreamId } from '../deliveries/delivery.events';
import { evolveKnownDelivery, initialDeliveryState } from '../deliveries/delivery.state';
import type { WebhookDelivery } from './webhook-deliveries.projection';
import { deliveryInOutbox, deliveryView } from './webhook-deliveries.projection';
import { expectedDeliveryRevision } from './task-webhook-outbox';
import { readWebhookOutbox } from './webhook-outbox.reader';
import { maskOperatorUrl } from './operator-url-mask';

/** Appends lost to another message's delivery events before this gives up; each is a fresh read. */
const MAX_TRIES = 5;

/**
 * Starts a new round of attempts of a task's delivered or failed message (the replay of a missed
 * message): the delivery decider's WebhookRedeliveryRequested, appended to the task's delivery
 * stream with the revision that was read, so the decision "not pending" holds when it lands. Any
 * dispatcher sees the append and attempts the message at once. A concurrent redelivery of the
 * same message makes this one find it pending, or redelivered since it first read: one round,
 * never two. The caller has checked the task's tenant. Throws the decider's refusals (404 for an
 * unknown message, 409 otherwise). Returns the message's delivery as recorded after the request
 * (pending, earlier attempts listed).
 */
export async function requestWebhookRedelivery(
  store: EventStore,
  taskId: string,
  messageId: string,
  now: () => Date = () => new Date(),
): Promise<WebhookDelivery> {
  let redeliveriesSeen: number | undefined;
  for (let tries = 1; ; tries++) {
    const outbox = await readWebhookOutbox(store, taskId);
    const state = deliveryInOutbox(outbox, messageId);
    redeliveriesSeen ??= state?.redeliveries;
    const request = { messageId, at: now().toISOString(), redeliveriesSeen };
    // The decider refuses a message no task event made due (404), so past it `state` is known.
    const events = decideDelivery({ type: 'RequestRedelivery', data: request }, state ?? initialDeliveryState());
    try {
      await store.appendToStream(webhookStreamId(taskId), toNewWebhookEvents(events), expectedDeliveryRevision(outbox));
      const delivery = deliveryView(events.reduce(evolveKnownDelivery, state!));
      return outbox.operatorUrl === undefined ? delivery : maskOperatorUrl(delivery, outbox.operatorUrl);
    } catch (error) {
      // Something else was appended meanwhile (this or another message's attempt, a redelivery): read again.
      if (!(error instanceof ExpectedRevisionConflictError) || tries >= MAX_TRIES) throw error;
    }
  }
}
