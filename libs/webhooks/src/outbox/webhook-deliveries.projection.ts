import { WebhookAttempt } from '../webhook-attempt';
import { WebhookAttemptedData } from './webhook-delivery.events';

// The delivery state of a task's messages, folded from its WebhookAttempted events: what
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

/** A message's state after `attempts` (its own, in order); no attempts: pending, due now. */
export function deliveryOf(
  message: { readonly id: string; readonly type: string },
  attempts: readonly WebhookAttemptedData[],
): WebhookDelivery {
  const last = attempts.at(-1);
  const shown = attempts.map(({ at, statusCode, error, durationMs }) => ({
    at,
    ...(statusCode === undefined ? {} : { statusCode }),
    ...(error === undefined ? {} : { error }),
    durationMs,
  }));
  const base = { id: message.id, type: message.type, attempts: shown };
  if (!last) return { ...base, status: 'pending' };
  if (last.delivered) return { ...base, status: 'delivered' };
  if (last.nextAttemptAt === undefined) return { ...base, status: 'failed' };
  return { ...base, status: 'pending', nextAttemptAt: last.nextAttemptAt };
}

/** Every message's delivery, in the order the messages became due. */
export function projectDeliveries(
  messages: readonly { readonly id: string; readonly type: string }[],
  attempts: readonly WebhookAttemptedData[],
): WebhookDelivery[] {
  const byMessage = new Map<string, WebhookAttemptedData[]>();
  for (const a of attempts) byMessage.set(a.messageId, [...(byMessage.get(a.messageId) ?? []), a]);
  return messages.map((m) => deliveryOf(m, byMessage.get(m.id) ?? []));
}
