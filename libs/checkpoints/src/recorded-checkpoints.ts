import { taskStreamId } from '@app/common';
import type { EventStore, StoredEvent } from '@app/event-store';
import type { CheckpointRef } from '@app/task-domain';
import { toTaskEvent } from '@app/task-domain';
import type { RecordedCheckpoint } from './retention/checkpoint-retention';

/** Events read per page. */
const READ_PAGE = 500;

/**
 * Every checkpoint a task's history names, in order: the
 * uploads' (on TaskCreated), each step's (on its tool_result) and the one a rollback brought back. A fork's copied history names
 * its source's, which it shares.
 */
export async function recordedCheckpoints(
  store: EventStore,
  taskId: string,
): Promise<{ checkpoints: RecordedCheckpoint<CheckpointRef>[]; emptiedAt: number[]; lastEventId: number }> {
  const checkpoints: RecordedCheckpoint<CheckpointRef>[] = [];
  const emptiedAt: number[] = [];
  let lastEventId = 0;
  for (let from = 1; ; from += READ_PAGE) {
    const page = await store.readStream(taskStreamId(taskId), { fromRevision: from, maxCount: READ_PAGE });
    checkpoints.push(...checkpointsIn(page));
    emptiedAt.push(...emptiedIn(page));
    lastEventId = page.at(-1)?.revision ?? lastEventId;
    if (page.length < READ_PAGE) break;
  }
  return { checkpoints, emptiedAt, lastEventId };
}

/** The checkpoints named by `events` (stored events of one task, in order). */
export function checkpointsIn(events: readonly StoredEvent[]): RecordedCheckpoint<CheckpointRef>[] {
  const checkpoints: RecordedCheckpoint<CheckpointRef>[] = [];
  for (const stored of events) {
    const event = toTaskEvent(stored);
    // A rollback names the checkpoint it brought back: the workspace from then on, kept as such.
    if ((event.type === 'TaskCreated' || event.type === 'ToolCallFinished' || event.type === 'TurnRolledBack') && event.data.checkpoint) {
      checkpoints.push({ eventId: stored.revision, recordedAt: stored.recordedAt, ref: event.data.checkpoint });
    }
  }
  return checkpoints;
}

/** The events (ids) that left the workspace empty: rollbacks to a turn that started with nothing recorded. */
export function emptiedIn(events: readonly StoredEvent[]): number[] {
  return events.flatMap((stored) => {
    const event = toTaskEvent(stored);
    return event.type === 'TurnRolledBack' && !event.data.checkpoint ? [stored.revision] : [];
  });
}
