import type { ScheduleLook, ScheduleLookResult } from '@app/runner';
import { scheduleShardOf } from '@app/workflows';
import { nextDueAt } from './cron-rules';
import type { ScheduleBook } from './schedule-book';
import type { ScheduleFiring } from './schedule-firing';

/** Schedules fired at once in a look: a shard's schedules due in the same second start a few at a time. */
const CONCURRENCY = 8;

/**
 * What a shard's clock workflow has the API do when it wakes (docs/api.md "Schedules", the
 * distributed mode): fire every due time up to now of each schedule it looks at, through
 * ScheduleFiring (exactly once, by the schedule's stream), and answer each one's next due time.
 * A rescan looks at every schedule of the shard in the store's list, with recovery. One
 * schedule's failure is answered as failed (the clock looks again soon) and does not hold up the
 * shard's other schedules.
 */
export async function lookAtSchedules(
  look: ScheduleLook,
  firing: ScheduleFiring,
  book: ScheduleBook,
  onError: (scheduleId: string, error: unknown) => void,
): Promise<ScheduleLookResult> {
  const ids = look.rescan
    ? (await book.registered()).map((entry) => entry.scheduleId).filter((id) => scheduleShardOf(id, look.shards) === look.shard)
    : look.scheduleIds;
  const recover = new Set(look.rescan ? ids : look.recover);
  const next: Record<string, number | null> = {};
  const failed: string[] = [];
  let taken = 0;
  const worker = async () => {
    while (taken < ids.length) {
      const scheduleId = ids[taken++];
      try {
        const state = await firing.fireDue(scheduleId, recover.has(scheduleId));
        next[scheduleId] = !state.exists || state.deleted ? null : (nextDueAt(state)?.getTime() ?? null);
      } catch (error) {
        onError(scheduleId, error);
        failed.push(scheduleId);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, ids.length) }, worker));
  return { next, failed };
}
