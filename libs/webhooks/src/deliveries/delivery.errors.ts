// The error types only: the @app/common index also re-exports modules that use Node (fs, crypto).
import { ConflictError, NotFoundError } from '@app/common/errors/app-error';

// The delivery decider's refusals, one class per condition. They extend the public NotFoundError
// and ConflictError (not a `WEBHOOKS.…` code of their own) because the redelivery request answers
// them as they are: 404 and 409 (docs/api.md "Errors"). Messages are shown to callers.

/** No task event made a message of this id due. */
export class UnknownWebhookDeliveryError extends NotFoundError {
  constructor(readonly messageId: string) {
    super(`webhook delivery ${messageId}`);
    this.name = 'UnknownWebhookDeliveryError';
  }
}

/** A redelivery of a message whose round has not ended: it would start a second round beside it. */
export class WebhookDeliveryPendingError extends ConflictError {
  constructor(readonly messageId: string) {
    super(
      `webhook delivery ${messageId} is still pending (being attempted or retried, or a redelivery was already requested): ` +
        'only a delivered or failed message can be redelivered',
    );
    this.name = 'WebhookDeliveryPendingError';
  }
}

/** MAX_REDELIVERIES_PER_MESSAGE reached. */
export class WebhookRedeliveryLimitError extends ConflictError {
  constructor(
    readonly messageId: string,
    readonly redeliveries: number,
  ) {
    super(`webhook delivery ${messageId} has been redelivered ${redeliveries} times, the most one message can be`);
    this.name = 'WebhookRedeliveryLimitError';
  }
}

/** Another request for the same redelivery was recorded after this one read the stream: one round answers both. */
export class ConcurrentWebhookRedeliveryError extends ConflictError {
  constructor(readonly messageId: string) {
    super(`webhook delivery ${messageId}: a redelivery requested at the same time went ahead (its round may have ended already)`);
    this.name = 'ConcurrentWebhookRedeliveryError';
  }
}

/** An attempt of a message already delivered or failed (another dispatcher finished it). */
export class WebhookDeliveryEndedError extends ConflictError {
  constructor(
    readonly messageId: string,
    readonly status: 'delivered' | 'failed',
  ) {
    super(`webhook delivery ${messageId} is ${status}: it has no attempt left to make`);
    this.name = 'WebhookDeliveryEndedError';
  }
}

/** An attempt before its time: a retry's wait is not over, or another dispatcher's claim still holds. */
export class WebhookAttemptNotDueError extends ConflictError {
  constructor(
    readonly messageId: string,
    readonly dueAt: string,
  ) {
    super(`webhook delivery ${messageId} is not due before ${dueAt}`);
    this.name = 'WebhookAttemptNotDueError';
  }
}

/** An outcome with no claim of an attempt to record it against. */
export class WebhookAttemptNotClaimedError extends ConflictError {
  constructor(readonly messageId: string) {
    super(`webhook delivery ${messageId} has no claimed attempt to record`);
    this.name = 'WebhookAttemptNotClaimedError';
  }
}

/**
 * A stored event this code cannot read as a delivery event (delivery-event.decoder.ts). Not a
 * conflict: the store holds something this release does not understand, so the reader stops.
 */
export class UnreadableWebhookEventError extends Error {
  constructor(
    readonly streamId: string,
    readonly revision: number,
    reason: string,
  ) {
    super(`${streamId}@${revision}: ${reason}`);
    this.name = 'UnreadableWebhookEventError';
  }
}
