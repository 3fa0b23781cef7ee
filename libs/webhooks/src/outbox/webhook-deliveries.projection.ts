import { WebhookAttempt } from '../webhook-attempt';
import { WebhookDeliveryEvent } from '../deliveries/delivery.events';

// The delivery state of a task's messages, folded from their delivery events: what
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

/** What the dispatcher needs besides: when the message may be attempted next, and that attempt's number. */
export interface WebhookSchedule {
  readonly delivery: WebhookDelivery;
  /** Epoch ms; 0 when due at once. Only meaningful while pending. */
  readonly dueAt: number;
  readonly nextAttempt: number;
}

/**
 * A message's state after its own delivery events, in order; none: pending, due now. A redelivery
 * request starts a new round: the status, the schedule and the attempt count come from the events
 * after the latest one, while `attempts` lists the attempts of every round (the audit trail).
 */
export function scheduleOf(
  message: { readonly id: string; readonly type: string },
  events: readonly WebhookDeliveryEvent[],
): WebhookSchedule {
  const outcomes = events.flatMap((e) => (e.type === 'WebhookAttempted' ? [e.data] : []));
  const attempts = outcomes.map(({ at, statusCode, error, durationMs }) => ({
    at,
    ...(statusCode === undefined ? {} : { statusCode }),
    ...(error === undefined ? {} : { error }),
    durationMs,
  }));
  const base = { id: message.id, type: message.type, attempts };
  const roundStart = events.map((e) => e.type).lastIndexOf('WebhookRedeliveryRequested') + 1;
  const claimsAndOutcomes = events.slice(roundStart).flatMap((e) => (e.type === 'WebhookRedeliveryRequested' ? [] : [e]));
  const last = claimsAndOutcomes.at(-1);
  const nextAttempt = Math.max(0, ...claimsAndOutcomes.map((e) => e.data.attempt)) + 1;
  if (!last) return { delivery: { ...base, status: 'pending' }, dueAt: 0, nextAttempt };
  // Claimed and not recorded yet: being attempted, or its dispatcher died and the lease runs out.
  if (last.type === 'WebhookAttemptStarted')
    return { delivery: { ...base, status: 'pending' }, dueAt: Date.parse(last.data.leaseUntil), nextAttempt };
  if (last.data.delivered) return { delivery: { ...base, status: 'delivered' }, dueAt: 0, nextAttempt };
  if (last.data.nextAttemptAt === undefined) return { delivery: { ...base, status: 'failed' }, dueAt: 0, nextAttempt };
  const { nextAttemptAt } = last.data;
  return { delivery: { ...base, status: 'pending', nextAttemptAt }, dueAt: Date.parse(nextAttemptAt), nextAttempt };
}

/** A message's delivery as the deliveries endpoint shows it. */
export const deliveryOf = (
  message: { readonly id: string; readonly type: string },
  events: readonly WebhookDeliveryEvent[],
): WebhookDelivery => scheduleOf(message, events).delivery;

/** Every message's delivery, in the order the messages became due. */
export function projectDeliveries(
  messages: readonly { readonly id: string; readonly type: string }[],
  events: readonly WebhookDeliveryEvent[],
): WebhookDelivery[] {
  const byMessage = new Map<string, WebhookDeliveryEvent[]>();
  for (const e of events) byMessage.set(e.data.messageId, [...(byMessage.get(e.data.messageId) ?? []), e]);
  return messages.map((m) => deliveryOf(m, byMessage.get(m.id) ?? []));
}
