import { WebhookAttempt } from '../webhook-attempt';

// ─── Delivery events ─────────────────────────────────────────────────────────────────────────
// Every attempt to deliver a webhook message is recorded as an event, so the schedule (what is
// due when) and the audit trail (GET …/webhook-deliveries) are projections of the store, and a
// restart resumes from them.
//
// They live in a stream of their own per task, `webhooks-<taskId>`, not in the task's stream:
// the task's stream is its public SSE stream, whose ids are its revisions with no gap (CONTRACT.md
// "Stream"), and its appends are the agent loop's optimistic-concurrency path; delivery
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

const STREAM_PREFIX = 'webhooks-';

/** The stream that records the delivery attempts of a task's webhooks. */
export const webhookStreamId = (taskId: string): string => `${STREAM_PREFIX}${taskId}`;

/** The task whose deliveries `streamId` records, or undefined for another stream. */
export const taskIdOfWebhookStream = (streamId: string): string | undefined =>
  streamId.startsWith(STREAM_PREFIX) ? streamId.slice(STREAM_PREFIX.length) : undefined;

export type WebhookDeliveryEvent =
  | { readonly type: typeof WEBHOOK_ATTEMPT_STARTED; readonly data: WebhookAttemptStartedData }
  | { readonly type: typeof WEBHOOK_ATTEMPTED; readonly data: WebhookAttemptedData }
  | { readonly type: typeof WEBHOOK_REDELIVERY_REQUESTED; readonly data: WebhookRedeliveryRequestedData };

/** What the decoder needs of a stored event. */
export interface RecordedWebhookEvent {
  readonly streamId: string;
  readonly revision: number;
  readonly type: string;
  readonly schemaVersion: number;
  readonly data: unknown;
}

/**
 * The one way a stored delivery event is read. Like the task events' decoder it refuses, loudly,
 * a type or version it does not know rather than skip it: a skipped attempt would send again.
 */
export function toWebhookDeliveryEvent(stored: RecordedWebhookEvent): WebhookDeliveryEvent {
  const where = `${stored.streamId}@${stored.revision}`;
  if (stored.type !== WEBHOOK_ATTEMPTED && stored.type !== WEBHOOK_ATTEMPT_STARTED && stored.type !== WEBHOOK_REDELIVERY_REQUESTED) {
    throw new Error(`${where}: ${stored.type} is not a webhook delivery event this code knows`);
  }
  if (stored.schemaVersion !== WEBHOOK_EVENT_SCHEMA_VERSION) {
    throw new Error(`${where}: schema version ${stored.schemaVersion}, but this code reads version ${WEBHOOK_EVENT_SCHEMA_VERSION}`);
  }
  const data = stored.data as { messageId?: unknown; attempt?: unknown } | null;
  if (typeof data !== 'object' || data === null || typeof data.messageId !== 'string') {
    throw new Error(`${where}: data is not a webhook delivery event's`);
  }
  if (stored.type !== WEBHOOK_REDELIVERY_REQUESTED && typeof data.attempt !== 'number') {
    throw new Error(`${where}: data is not a webhook attempt`);
  }
  return { type: stored.type, data } as WebhookDeliveryEvent;
}
