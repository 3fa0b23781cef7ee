import type { NewEvent } from '@app/event-store';
import type { Event } from '@app/task-domain';
import type { WebhookAttempt } from '../webhook-attempt';

// ─── Delivery events ─────────────────────────────────────────────────────────────────────────
// Every attempt to deliver a webhook message is recorded as an event, so the schedule (what is
// due when) and the audit trail (GET …/webhook-deliveries) are projections of the store, and a
// restart resumes from them. The delivery decider (delivery.decider.ts) writes them; the decoder
// (delivery-event.decoder.ts) reads them. Their types and `data` shapes are stored records: a
// change needs a new schema version and an upcast in the decoder, never an edit here.
//
// They live in a stream of their own per task, `webhooks-<taskId>`, not in the task's stream:
// the task's stream is its public SSE stream, whose ids are its revisions with no gap (docs/api.md
// "Streaming events (SSE)"), and its appends are the agent loop's optimistic-concurrency path; delivery
// bookkeeping in it would leave holes in the stream and make the loop's appends conflict. Readers
// of the global feed (task views, agent loop) skip streams that are not `task-…` ones.

export const WEBHOOK_ATTEMPT_STARTED = 'WebhookAttemptStarted';
export const WEBHOOK_ATTEMPTED = 'WebhookAttempted';
export const WEBHOOK_REDELIVERY_REQUESTED = 'WebhookRedeliveryRequested';
/** The `data` shape version of every delivery event this code writes and reads. */
export const WEBHOOK_EVENT_SCHEMA_VERSION = 1;

/**
 * A dispatcher claims the next attempt of a message before making it: appended with the stream's
 * expected revision, so of several dispatchers (distributed mode) exactly one makes each attempt.
 * Should it die before recording the outcome, the message is due again at `leaseUntil`.
 */
export interface WebhookAttemptStartedData {
  readonly messageId: string;
  readonly type: string;
  /** 1-based, counted within the message's round (a redelivery starts a new round at 1). */
  readonly attempt: number;
  readonly at: string;
  readonly leaseUntil: string;
}

export interface WebhookAttemptedData extends WebhookAttempt {
  /** The message's `webhook-id`. */
  readonly messageId: string;
  readonly type: string;
  /** 1-based, counted within the message's round (a redelivery starts a new round at 1). */
  readonly attempt: number;
  readonly delivered: boolean;
  /** When the next attempt is due (ISO 8601); absent on the final attempt (delivered, or WEBHOOK_MAX_ATTEMPTS reached). */
  readonly nextAttemptAt?: string;
}

/**
 * A tenant asked for a delivered or failed message to be sent again
 * (POST /tasks/{id}/webhook-deliveries/{deliveryId}/redeliver): a new round of attempts starts, due
 * at once, with the same `webhook-id` and body and up to WEBHOOK_MAX_ATTEMPTS attempts of its own.
 * Appended with the stream's expected revision, so two concurrent requests make one round.
 */
export interface WebhookRedeliveryRequestedData {
  readonly messageId: string;
  readonly type: string;
  readonly at: string;
}

export type WebhookAttemptStarted = Event<typeof WEBHOOK_ATTEMPT_STARTED, WebhookAttemptStartedData>;
export type WebhookAttempted = Event<typeof WEBHOOK_ATTEMPTED, WebhookAttemptedData>;
export type WebhookRedeliveryRequested = Event<typeof WEBHOOK_REDELIVERY_REQUESTED, WebhookRedeliveryRequestedData>;

/** What a delivery stream holds. */
export type WebhookDeliveryEvent = WebhookAttemptStarted | WebhookAttempted | WebhookRedeliveryRequested;

/**
 * A task event made a message due (webhook-messages.ts: a turn ended, a call waits for approval).
 * Never stored: that task event, in the task's own stream, is the record; the outbox derives this
 * from it, and a delivery's state starts from it. So a message is queued by the task's history,
 * not by a command of the delivery decider.
 */
export type WebhookMessageDue = Event<'WebhookMessageDue', { readonly messageId: string; readonly type: string }>;

/** What a delivery's state is folded from: its message becoming due, then its own delivery events. */
export type DeliveryEvent = WebhookMessageDue | WebhookDeliveryEvent;

/** The delivery events as appended: every one at WEBHOOK_EVENT_SCHEMA_VERSION. */
export const toNewWebhookEvents = (events: readonly WebhookDeliveryEvent[]): NewEvent[] =>
  events.map((e) => ({ type: e.type, data: e.data, schemaVersion: WEBHOOK_EVENT_SCHEMA_VERSION }));

const STREAM_PREFIX = 'webhooks-';

/** The stream that records the delivery attempts of a task's webhooks. */
export const webhookStreamId = (taskId: string): string => `${STREAM_PREFIX}${taskId}`;

/** The task whose deliveries `streamId` records, or undefined for another stream. */
export const taskIdOfWebhookStream = (streamId: string): string | undefined =>
  streamId.startsWith(STREAM_PREFIX) ? streamId.slice(STREAM_PREFIX.length) : undefined;
