// MAX_RUNNING_TASKS_PER_TENANT, decided without a lock: a waiting task's turn may start only
// while fewer than `limit` of its tenant's tasks in line (a turn running or a message waiting, see
// turn-queue.projection.ts) hold an earlier place. Why this never lets more than `limit` run,
// even when several orchestrators decide at once from read models that lag:
// - every process's view is a prefix of the store's global order, and places only move later;
// - a task T at place p sees every task whose place is earlier than p (their messages came
//   before T's, so any prefix holding T's message holds theirs), each at a place no later than
//   its true one, and some tasks that have in truth left the line: a lagging view counts at
//   least as many ahead of T as the truth does;
// - so a task admitted has fewer than `limit` ahead of it in truth too, and ranks only drop after
//   that (new tasks queue behind; a task whose turn ends and moves to its next message only moves
//   back). Only tasks ranked below `limit` ever run: at most `limit` at once.
// Turns start in the order they were asked for (FIFO): a later one never overtakes.

export function mayStartTurn(place: number, tenantPlaces: readonly number[], limit: number): boolean {
  let ahead = 0;
  for (const other of tenantPlaces) if (other < place && ++ahead >= limit) return false;
  return true;
}
