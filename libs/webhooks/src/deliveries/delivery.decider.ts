import type { Command } from '@app/task-domain';
import type { RetryPolicy } from '../retry-schedule';
import { retryDelayMs } from '../retry-schedule';
import type { AttemptOutcome } from '../webhook-attempt';
import {
  ConcurrentWebhookRedeliveryError,
  UnknownWebhookDeliveryError,
  WebhookAttemptNotClaimedError,
  WebhookAttemptNotDueError,
  WebhookDeliveryEndedError,
  WebhookDeliveryPendingError,
  WebhookRedeliveryLimitError,
} from './delivery.errors';
import type { WebhookDeliveryEvent } from './delivery.events';
import type { DeliveryState, PendingDelivery } from './delivery.state';

// ─── Commands ────────────────────────────────────────────────────────────────────────────────
// The rules of one message's delivery: decideDelivery(command, state) → the events to append, or
// a typed error (delivery.errors.ts). The clock and the retry's jitter arrive in the command;
// nothing here does I/O. A message is not queued by a command: a task event makes it due
// (WebhookMessageDue). Nor is giving up one: the failed attempt that is the last
// WEBHOOK_MAX_ATTEMPTS allows is recorded without a next attempt, and that is what `failed` is.

/** Claims the message's next attempt, beginning `at` (ISO 8601); the claim holds for `leaseMs`. */
export type StartAttempt = Command<'StartAttempt', { readonly messageId: string; readonly at: string; readonly leaseMs: number }>;

/** Records the outcome of the attempt claimed, and when the next one is due if it failed. */
export type RecordAttempt = Command<
  'RecordAttempt',
  {
    readonly messageId: string;
    readonly outcome: AttemptOutcome;
    /** When the attempt ended (ISO 8601): a retry's wait counts from here. */
    readonly endedAt: string;
    readonly retry: RetryPolicy;
    /** In [0, 1): the share of the retry wait's jitter this retry gets (the caller draws it). */
    readonly jitter: number;
  }
>;

/**
 * Starts a new round of attempts of a delivered or failed message, `at` (ISO 8601).
 * `redeliveriesSeen`: the redeliveries a request saw when it first read the stream. It reads again
 * when its append loses to another; one requested in between (the same request, made twice at
 * once) answers it, even when that round has ended by the time it reads again.
 */
export type RequestRedelivery = Command<
  'RequestRedelivery',
  { readonly messageId: string; readonly at: string; readonly redeliveriesSeen?: number }
>;

export type DeliveryCommand = StartAttempt | RecordAttempt | RequestRedelivery;

/**
 * Redeliveries of one message, at most. Each round waits for the last to end, but a receiver that
 * answers at once would let a tenant replay a message in a loop against the operator's
 * WEBHOOK_URL (a chat channel, say); this bounds that, and the delivery stream's length, per message.
 */
export const MAX_REDELIVERIES_PER_MESSAGE = 10;

// ─── Decide ──────────────────────────────────────────────────────────────────────────────────

export function decideDelivery(command: DeliveryCommand, state: DeliveryState): WebhookDeliveryEvent[] {
  const { messageId } = command.data;
  if (state.status === 'unknown' || state.messageId !== messageId) throw new UnknownWebhookDeliveryError(messageId);
  const { type } = state;
  switch (command.type) {
    case 'StartAttempt': {
      if (state.status !== 'pending') throw new WebhookDeliveryEndedError(messageId, state.status);
      const at = Date.parse(command.data.at);
      if (state.dueAt > at) throw new WebhookAttemptNotDueError(messageId, new Date(state.dueAt).toISOString());
      const leaseUntil = new Date(at + command.data.leaseMs).toISOString();
      return [
        { type: 'WebhookAttemptStarted', data: { messageId, type, attempt: state.lastAttempt + 1, at: command.data.at, leaseUntil } },
      ];
    }
    case 'RecordAttempt':
      if (state.status !== 'pending' || !state.claim) throw new WebhookAttemptNotClaimedError(messageId);
      return [recordAttempt(command.data, state, state.claim.attempt)];
    case 'RequestRedelivery': {
      if (state.redeliveries >= MAX_REDELIVERIES_PER_MESSAGE) throw new WebhookRedeliveryLimitError(messageId, state.redeliveries);
      if (state.status === 'pending') throw new WebhookDeliveryPendingError(messageId);
      const seen = command.data.redeliveriesSeen;
      if (seen !== undefined && state.redeliveries > seen) throw new ConcurrentWebhookRedeliveryError(messageId);
      return [{ type: 'WebhookRedeliveryRequested', data: { messageId, type, at: command.data.at } }];
    }
    default: {
      const _exhaustive: never = command;
      return _exhaustive;
    }
  }
}

/** Delivered on a 2xx; otherwise retried after the schedule's wait, unless this was the last attempt allowed. */
function recordAttempt(data: RecordAttempt['data'], state: PendingDelivery, attempt: number): WebhookDeliveryEvent {
  const { delivered } = data.outcome;
  const delay = delivered ? undefined : retryDelayMs(attempt, data.retry, () => data.jitter);
  const nextAttemptAt = delay === undefined ? undefined : new Date(Date.parse(data.endedAt) + delay).toISOString();
  return {
    type: 'WebhookAttempted',
    data: {
      messageId: state.messageId,
      type: state.type,
      attempt,
      ...data.outcome.attempt,
      delivered,
      ...(nextAttemptAt === undefined ? {} : { nextAttemptAt }),
    },
  };
}
