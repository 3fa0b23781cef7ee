import type { StoredEvent } from '@app/event-store';
import type { PublicEvent } from '@app/task-domain';
import { toPublicEvent, toTaskEvent } from '@app/task-domain';

/**
 * How a stored event reaches a client: its kind and payload, as the SSE stream sends it and the
 * history endpoint lists it. Both go through this one function, so the two can never differ.
 * Secrets are already redacted in what the store holds (docs/api.md "Secrets and env"), and the
 * projection drops internal fields (an artifact's object key).
 */
export const streamEventOf = (stored: StoredEvent): PublicEvent => toPublicEvent(toTaskEvent(stored));
