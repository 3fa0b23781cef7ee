import { UnreadableWebhookEventError } from './delivery.errors';
import type { WebhookDeliveryEvent } from './delivery.events';
import { WEBHOOK_ATTEMPTED, WEBHOOK_ATTEMPT_STARTED, WEBHOOK_EVENT_SCHEMA_VERSION, WEBHOOK_REDELIVERY_REQUESTED } from './delivery.events';

/** What the decoder needs of a stored event: the event store's StoredEvent is one. */
export interface RecordedWebhookEvent {
  readonly streamId: string;
  readonly revision: number;
  readonly type: string;
  readonly schemaVersion: number;
  readonly data: unknown;
}

/**
 * The one way a stored delivery event is read (never a cast at the reader). Every type is at
 * version 1, so there is nothing to upcast yet; a version 2 would be upcast here, so that the
 * decider and the projections only ever see the current shape. Like the task events' decoder it
 * refuses, loudly, a type or version it does not know rather than skip it: a skipped attempt would
 * send again.
 */
export function toWebhookDeliveryEvent(stored: RecordedWebhookEvent): WebhookDeliveryEvent {
  const refuse = (reason: string) => new UnreadableWebhookEventError(stored.streamId, stored.revision, reason);
  if (stored.type !== WEBHOOK_ATTEMPTED && stored.type !== WEBHOOK_ATTEMPT_STARTED && stored.type !== WEBHOOK_REDELIVERY_REQUESTED) {
    throw refuse(`${stored.type} is not a webhook delivery event this code knows`);
  }
  if (stored.schemaVersion !== WEBHOOK_EVENT_SCHEMA_VERSION) {
    throw refuse(`schema version ${stored.schemaVersion}, but this code reads version ${WEBHOOK_EVENT_SCHEMA_VERSION}`);
  }
  const data = stored.data as { messageId?: unknown; attempt?: unknown } | null;
  if (typeof data !== 'object' || data === null || typeof data.messageId !== 'string') {
    throw refuse("data is not a webhook delivery event's");
  }
  if (stored.type !== WEBHOOK_REDELIVERY_REQUESTED && typeof data.attempt !== 'number') {
    throw refuse('data is not a webhook attempt');
  }
  return { type: stored.type, data } as WebhookDeliveryEvent;
}
