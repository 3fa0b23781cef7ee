import type { TaskState } from '@app/task-domain';

/**
 * The turn a task's agent loop is on: the running (or last) turn, or, while a message waits to
 * start one, the turn it will start. The Temporal runner runs each turn as its own workflow and
 * addresses it by this number; a step asked for another turn than this does nothing.
 */
export function turnOf(state: TaskState): number {
  if (!state.exists) return 0;
  // A fork's suspended turn is the turn it is on, not a next one.
  return state.status === 'pending' && !state.resuming ? state.turn + 1 : state.turn;
}
