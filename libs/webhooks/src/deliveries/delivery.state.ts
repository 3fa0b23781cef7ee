import type { WebhookAttempt } from '../webhook-attempt';
import type { DeliveryEvent, WebhookAttemptedData, WebhookDeliveryEvent, WebhookMessageDue } from './delivery.events';

// ─── State ───────────────────────────────────────────────────────────────────────────────────
// One message's delivery, folded from the message becoming due and then its own delivery events.
// A task's delivery stream holds the events of all of its messages: a delivery takes its own and
// leaves the others. A redelivery request starts a new round: the status, the schedule and the
// attempt count come from the events after it, while `attempts` lists every round's (the audit
// trail). Whatever was recorded last in the round says where the delivery stands, as it was
// appended: of two dispatchers, one whose claim's lease ran out may record its outcome after the
// other's claim.

interface KnownDelivery {
  readonly messageId: string;
  /** The message's type (`task.completed`, …). */
  readonly type: string;
  /** Every recorded attempt, of every round, oldest first. */
  readonly attempts: readonly WebhookAttempt[];
  /** Redeliveries requested so far. */
  readonly redeliveries: number;
  /** The highest attempt number claimed or recorded in this round; 0 before its first. */
  readonly lastAttempt: number;
}

/** No task event made a message of this id due (or none has been folded yet). */
export interface UnknownDelivery {
  readonly status: 'unknown';
}

export interface PendingDelivery extends KnownDelivery {
  readonly status: 'pending';
  /** When the next attempt may begin (epoch ms): 0 at once, a claim's lease end, or a failed attempt's retry time. */
  readonly dueAt: number;
  /** The attempt claimed and not recorded yet: being made, or its dispatcher died and the lease runs out. */
  readonly claim?: { readonly attempt: number; readonly leaseUntil: string };
  /** When a failed attempt is retried (ISO 8601), as the delivery log shows it. */
  readonly nextAttemptAt?: string;
}

export interface DeliveredDelivery extends KnownDelivery {
  readonly status: 'delivered';
}

/** Its last attempt failed, and it was the last WEBHOOK_MAX_ATTEMPTS allows. */
export interface FailedDelivery extends KnownDelivery {
  readonly status: 'failed';
}

export type DeliveryState = UnknownDelivery | PendingDelivery | DeliveredDelivery | FailedDelivery;

/** A delivery whose message a task event made due: what every delivery of an outbox's messages is. */
export type KnownDeliveryState = PendingDelivery | DeliveredDelivery | FailedDelivery;

export const initialDeliveryState = (): DeliveryState => ({ status: 'unknown' });

export function evolveDelivery(state: DeliveryState, event: DeliveryEvent): DeliveryState {
  if (event.type === 'WebhookMessageDue') return state.status === 'unknown' ? dueDelivery(event.data) : state;
  // The event of a message no task event made due: never shown, never attempted.
  return state.status === 'unknown' ? state : evolveKnownDelivery(state, event);
}

/** A message just made due: pending, due at once, nothing attempted. */
export function dueDelivery({ messageId, type }: WebhookMessageDue['data']): PendingDelivery {
  return { status: 'pending', messageId, type, attempts: [], redeliveries: 0, lastAttempt: 0, dueAt: 0 };
}

/** evolveDelivery past WebhookMessageDue: a known delivery stays known, whatever is recorded of it. */
export function evolveKnownDelivery(state: KnownDeliveryState, event: WebhookDeliveryEvent): KnownDeliveryState {
  // Another message's event of the same stream.
  if (event.data.messageId !== state.messageId) return state;
  const { messageId, type, attempts, redeliveries, lastAttempt } = state;
  const known: KnownDelivery = { messageId, type, attempts, redeliveries, lastAttempt };
  switch (event.type) {
    case 'WebhookAttemptStarted': {
      const { attempt, leaseUntil } = event.data;
      const claimed = { ...known, lastAttempt: Math.max(lastAttempt, attempt) };
      return { ...claimed, status: 'pending', dueAt: Date.parse(leaseUntil), claim: { attempt, leaseUntil } };
    }
    case 'WebhookAttempted': {
      const d = event.data;
      const recorded = { ...known, attempts: [...attempts, attemptOf(d)], lastAttempt: Math.max(lastAttempt, d.attempt) };
      if (d.delivered) return { ...recorded, status: 'delivered' };
      if (d.nextAttemptAt === undefined) return { ...recorded, status: 'failed' };
      return { ...recorded, status: 'pending', dueAt: Date.parse(d.nextAttemptAt), nextAttemptAt: d.nextAttemptAt };
    }
    case 'WebhookRedeliveryRequested':
      return { ...known, status: 'pending', redeliveries: redeliveries + 1, lastAttempt: 0, dueAt: 0 };
    default: {
      const _exhaustive: never = event;
      return _exhaustive;
    }
  }
}

/** The attempt as the delivery log shows it: the outcome's own fields, none of its bookkeeping. */
function attemptOf({ at, statusCode, error, durationMs }: WebhookAttemptedData): WebhookAttempt {
  return { at, ...(statusCode === undefined ? {} : { statusCode }), ...(error === undefined ? {} : { error }), durationMs };
}
