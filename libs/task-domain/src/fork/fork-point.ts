// The error types only: the @app/common index also re-exports modules that use Node (fs, crypto).
import { NotFoundError, ValidationError } from '@app/common/errors/app-error';
import { DONE_KIND, toPublicEvent } from '../projections/public-event.projection';
import type { TaskEvent } from '../task.events';
import { NotAForkPointError } from '../task.errors';

// Where a task may be forked (docs/api.md "POST /api/v1/tasks/{id}/fork"): after an event at which
// the task stands still between two things it does, so the fork can go on from there by itself.
// Said in the public kinds callers see, since they pick the event from the stream or the history.

const FORK_POINT_KINDS: ReadonlySet<string> = new Set(['message', 'tool_result', DONE_KIND]);

export const isForkPoint = (event: TaskEvent): boolean => FORK_POINT_KINDS.has(toPublicEvent(event).kind);

/**
 * The source's events 1..`afterEventId` (public ids are stream revisions, so event N is
 * `events[N - 1]`), once checked that a fork may be taken there: an id the task does not have is
 * NOT_FOUND, one that is not a fork point a conflict naming the nearest ones, and a `message` to
 * start the fork with is only for a fork taken at rest (after a `done`).
 */
export function forkPrefix(events: readonly TaskEvent[], afterEventId: number, withMessage: boolean): TaskEvent[] {
  if (!Number.isSafeInteger(afterEventId) || afterEventId < 1 || afterEventId > events.length)
    throw new NotFoundError(`event ${afterEventId}`);
  const event = events[afterEventId - 1];
  if (!isForkPoint(event)) {
    const { before, after } = nearestForkPoints(events, afterEventId);
    throw new NotAForkPointError(afterEventId, toPublicEvent(event).kind, before, after);
  }
  if (withMessage && toPublicEvent(event).kind !== DONE_KIND) {
    throw new ValidationError(
      `message can only be given for a fork after a done event: event ${afterEventId} is a ${toPublicEvent(event).kind} event, after which the fork goes on with its turn`,
    );
  }
  return events.slice(0, afterEventId);
}

/** The ids of the fork points closest to `eventId` on each side; undefined when there is none. */
export function nearestForkPoints(events: readonly TaskEvent[], eventId: number): { before?: number; after?: number } {
  let before: number | undefined;
  for (let id = eventId - 1; id >= 1 && before === undefined; id--) if (isForkPoint(events[id - 1])) before = id;
  let after: number | undefined;
  for (let id = eventId + 1; id <= events.length && after === undefined; id++) if (isForkPoint(events[id - 1])) after = id;
  return { ...(before === undefined ? {} : { before }), ...(after === undefined ? {} : { after }) };
}
