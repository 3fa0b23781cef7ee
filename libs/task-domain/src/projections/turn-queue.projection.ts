import type { TaskEvent } from '../task.events';

// Where each task stands in its tenant's line of turns (MAX_RUNNING_TASKS_PER_TENANT), from the
// event store's global order. A task is in line while a turn of it runs or a message of it waits
// for one; its place is the global position of the message that asked for that turn: the running
// turn's, else its oldest waiting message's. Places only ever move later (a task's next message
// is newer than the one whose turn just ended), and every process reads the store in the same
// order, so every process sees the same line.

export interface TurnQueueEntry {
  readonly taskId: string;
  readonly tenantId: string;
  /** Global position of the message whose turn is running; absent while none runs. */
  readonly running?: number;
  /** Messages waiting for their turn, oldest first, with the global position of each. */
  readonly waiting: readonly { readonly messageId: string; readonly position: number }[];
}

/** The entry's place in line, or undefined once the task is out of it (nothing runs or waits). */
export const turnQueuePlace = (entry: TurnQueueEntry): number | undefined => entry.running ?? entry.waiting[0]?.position;

/** A task out of line (nothing runs or waits): where its next message starts from. */
export const outOfLine = (taskId: string, tenantId: string): TurnQueueEntry => ({ taskId, tenantId, waiting: [] });

/** Applies one of the task's events, `position` being its global position. */
export function projectTurnQueue(entry: TurnQueueEntry, event: TaskEvent, position: number): TurnQueueEntry {
  switch (event.type) {
    case 'TaskCreated':
      return { ...entry, waiting: [...entry.waiting, { messageId: event.data.messageId, position }] };
    case 'UserMessageAdded':
      return { ...entry, waiting: [...entry.waiting, { messageId: event.data.messageId, position }] };
    case 'TurnStarted': {
      const asked = entry.waiting.find((m) => m.messageId === event.data.messageId);
      // `running` still set: the turn of an interrupt, which keeps the interrupted turn's place.
      return { ...entry, running: entry.running ?? asked?.position ?? position, waiting: entry.waiting.filter((m) => m !== asked) };
    }
    case 'TaskForked': {
      // A fork's running turn queues again at the fork's copy of its message, the end of the line.
      const resumes = event.data.resumes;
      if (!resumes || entry.running === undefined) return entry;
      const { running, ...rest } = entry;
      return { ...rest, waiting: [{ messageId: resumes.messageId, position: running }, ...entry.waiting] };
    }
    case 'TurnResumed': {
      const asked = entry.waiting.find((m) => m.messageId === event.data.messageId);
      return { ...entry, running: asked?.position ?? position, waiting: entry.waiting.filter((m) => m !== asked) };
    }
    case 'TurnCompleted':
    case 'TaskFailed': {
      const { running: _ended, ...rest } = entry;
      return rest;
    }
    case 'TaskCancelled': {
      // An interrupt hands its running place to the turn it starts in the same append.
      if (event.data.reason === 'interrupted') return entry;
      const dropped = new Set(event.data.droppedMessageIds);
      const { running: _ended, ...rest } = entry;
      return { ...rest, waiting: entry.waiting.filter((m) => !dropped.has(m.messageId)) };
    }
    default:
      return entry;
  }
}
