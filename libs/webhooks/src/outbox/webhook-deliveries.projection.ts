import type { WebhookAttempt } from '../webhook-attempt';
import type { WebhookDeliveryEvent } from '../deliveries/delivery.events';
import type { KnownDeliveryState } from '../deliveries/delivery.state';
import { dueDelivery, evolveKnownDelivery } from '../deliveries/delivery.state';
import type { WebhookOutbox } from './task-webhook-outbox';

// The delivery state of a task's messages, folded by the delivery decider's evolve: what
// GET /tasks/{id}/webhook-deliveries shows and what the dispatcher schedules from.

export type WebhookDeliveryStatus = 'pending' | 'delivered' | 'failed';

export interface WebhookDelivery {
  readonly id: string;
  readonly type: string;
  readonly status: WebhookDeliveryStatus;
  readonly attempts: readonly WebhookAttempt[];
  /** When the next attempt is due, while pending after a failed attempt. */
  readonly nextAttemptAt?: string;
}

/** A listed message: its `webhook-id` and type. */
export interface ListedMessage {
  readonly id: string;
  readonly type: string;
}

/** Every message's delivery state by message id, from one pass over the task's delivery events (any message's, in order). */
export function deliveryStatesOf(
  messages: readonly ListedMessage[],
  events: readonly WebhookDeliveryEvent[],
): Map<string, KnownDeliveryState> {
  const states = new Map(messages.map((m): [string, KnownDeliveryState] => [m.id, dueDelivery({ messageId: m.id, type: m.type })]));
  for (const e of events) {
    const state = states.get(e.data.messageId);
    if (state) states.set(e.data.messageId, evolveKnownDelivery(state, e));
  }
  return states;
}

/**
 * A message's state after the delivery events (any message's, in order); none: pending, due now.
 * A redelivery request starts a new round: the status, the schedule and the attempt count come
 * from the events after the latest one, while `attempts` lists every round's (the audit trail).
 */
export const deliveryStateOf = (message: ListedMessage, events: readonly WebhookDeliveryEvent[]): KnownDeliveryState =>
  events.reduce(evolveKnownDelivery, dueDelivery({ messageId: message.id, type: message.type }));

/** Every delivery of the outbox's messages, by message id. */
export const outboxDeliveryStates = (outbox: WebhookOutbox): Map<string, KnownDeliveryState> =>
  deliveryStatesOf(
    outbox.messages.map((m) => ({ id: m.id, type: m.payload.type })),
    outbox.deliveryEvents,
  );

/** The delivery of the outbox's message `messageId`; undefined when no event of the task made it due. */
export function deliveryInOutbox(outbox: WebhookOutbox, messageId: string): KnownDeliveryState | undefined {
  const message = outbox.messages.find((m) => m.id === messageId);
  return message && deliveryStateOf({ id: message.id, type: message.payload.type }, outbox.deliveryEvents);
}

/** A delivery as the deliveries endpoint shows it. */
export function deliveryView(state: KnownDeliveryState): WebhookDelivery {
  const shown = { id: state.messageId, type: state.type, attempts: state.attempts, status: state.status };
  return state.status === 'pending' && state.nextAttemptAt !== undefined ? { ...shown, nextAttemptAt: state.nextAttemptAt } : shown;
}

/** Every message's delivery, in the order the messages became due. */
export function projectDeliveries(messages: readonly ListedMessage[], events: readonly WebhookDeliveryEvent[]): WebhookDelivery[] {
  const states = deliveryStatesOf(messages, events);
  return messages.map((m) => deliveryView(states.get(m.id)!));
}
