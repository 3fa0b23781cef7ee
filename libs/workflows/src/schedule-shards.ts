// Which clock workflow wakes a schedule in the distributed mode (docs/api.md "Schedules"): the
// schedules are spread over a fixed number of shards by a hash of their id, each shard one
// workflow that sleeps until the earliest due time among its schedules. Every process must agree
// on the count, so it is a constant; changing it is a migration (the old shards' workflows end
// when they find no schedule of theirs, and every API process rescans the shards at start).

/** Shards of the schedules: several activities fire at once at a busy minute, few workflows idle. */
export const SCHEDULE_SHARDS = 16;

/**
 * The workflow id of a shard's clock: named after the schedules' task queue, so deployments that
 * share a Temporal namespace (each with its own TEMPORAL_TASK_QUEUE) never signal each other's.
 */
export function scheduleClockWorkflowId(taskQueue: string, shard: number): string {
  return `${taskQueue}-clock-${shard}`;
}

/** The shard of a schedule: FNV-1a of its id, so every process and language computes the same. */
export function scheduleShardOf(scheduleId: string, shards: number): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < scheduleId.length; i++) {
    hash ^= scheduleId.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash % shards;
}
