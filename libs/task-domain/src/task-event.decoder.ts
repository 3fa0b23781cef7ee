import type { TaskEvent, TaskEventType } from './task.events';
import { TASK_EVENT_SCHEMA_VERSIONS } from './task.events';
import { UnreadableTaskEventError } from './task.errors';

/** What the decoder needs of a stored event: the event store's StoredEvent is one. */
export interface RecordedEvent {
  readonly streamId: string;
  readonly revision: number;
  readonly type: string;
  readonly schemaVersion: number;
  readonly data: unknown;
}

/**
 * The one way a stored event becomes a TaskEvent: every reader (command executor, read models,
 * SSE, agent loop) goes through here, never through a cast.
 *
 * It checks that the type is one of ours and that `data` is at the schema version this code
 * writes (TASK_EVENT_SCHEMA_VERSIONS). When a type moves to version 2, this is the place that
 * upcasts a version-1 record to the current shape, so no reader ever sees an old one. Today every
 * type is at version 1, so there is nothing to upcast yet.
 *
 * Anything else (an unknown type, a newer version written by a newer release, data that is not an
 * object) throws UnreadableTaskEventError. Readers fail loudly on it and never skip the event: a
 * skipped event would leave a state that never existed (a call still awaiting approval, a turn
 * that never ended). So a release that writes a new type or version must be deployed after every
 * reader that has to read it. Only the envelope is checked, not each field: events are written
 * by the decider, and a newer release may add optional fields an older reader leaves alone.
 */
export function toTaskEvent(stored: RecordedEvent): TaskEvent {
  const refuse = (reason: string) => new UnreadableTaskEventError(stored.streamId, stored.revision, stored.type, reason);
  if (!isTaskEventType(stored.type)) throw refuse('not a task event type this code knows');
  const current = TASK_EVENT_SCHEMA_VERSIONS[stored.type];
  if (stored.schemaVersion !== current) throw refuse(`schema version ${stored.schemaVersion}, but this code reads version ${current}`);
  const { data } = stored;
  if (typeof data !== 'object' || data === null || Array.isArray(data)) throw refuse('data is not an object');
  return { type: stored.type, data } as TaskEvent;
}

function isTaskEventType(type: string): type is TaskEventType {
  return Object.prototype.hasOwnProperty.call(TASK_EVENT_SCHEMA_VERSIONS, type);
}
