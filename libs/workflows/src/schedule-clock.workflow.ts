import { condition, continueAsNew, proxyActivities, setHandler, workflowInfo } from '@temporalio/workflow';
import type { ScheduleActivities, ScheduleLookResult, ScheduleShardInput } from './activities.types';
import { scheduleChangedSignal, scheduleRescanSignal } from './schedule.signals';

// The clock of one shard of the schedules (docs/api.md "Schedules", the distributed mode): a
// durable timer in the Temporal server that survives every process of ours. It keeps the next due
// time of each schedule of its shard, sleeps until the earliest, and then has its activity fire
// every schedule due by then, in one call. It decides nothing about firing: the activity fires
// each due time through the schedule's event stream, where exactly once is decided (a retried
// activity finds the run recorded and starts nothing twice), and answers with each schedule's
// next due time. Only schedule ids and times enter workflow history: a schedule's task, secrets
// and cron never do.
//
// Why a shard and not a workflow per schedule: on a Temporal server every open workflow costs
// its wakes, its history and the worker's cache; a thousand schedules due in the same minute were
// a thousand workflow tasks and activities where sixteen do the same work (measured in
// BENCHMARKS.md, benchmark 14).

/** Wakes of one run before it continues as new. */
const WAKES_PER_RUN = 500;
/** Schedules one activity looks at; more due at once are looked at by the next, straight after. */
const LOOK_BATCH = 200;
/** Changes kept by id; past this many before a look, the shard is rescanned instead. */
const MAX_CHANGED = 1000;
/** A schedule whose look failed is looked at again this soon, with recovery. */
const RETRY_FAILED_MS = 5000;

const { fireSchedules } = proxyActivities<ScheduleActivities>({
  // A look fires what is due: one run each, or many missed ones after a long stop.
  startToCloseTimeout: '10 minutes',
  // The activity heartbeats on a timer, so a silent one means a dead worker: retried elsewhere soon.
  heartbeatTimeout: '5 seconds',
  // Retried until it succeeds (a store that is down comes back): a schedule never gives up firing.
  retry: { initialInterval: '500ms', backoffCoefficient: 2, maximumInterval: '1 minute' },
});

export async function scheduleClockWorkflow(input: ScheduleShardInput): Promise<void> {
  const { shard, shards } = input;
  const due = new Map<string, number>(Object.entries(input.due ?? {}));
  const changed = new Set<string>(input.changed ?? []);
  const recover = new Set<string>(input.recover ?? []);
  let rescan = input.rescan ?? false;
  setHandler(scheduleChangedSignal, (scheduleId: string) => {
    if (rescan) return;
    changed.add(scheduleId);
    if (changed.size > MAX_CHANGED) {
      changed.clear();
      rescan = true;
    }
  });
  setHandler(scheduleRescanSignal, () => {
    changed.clear();
    rescan = true;
  });
  const apply = (result: ScheduleLookResult) => {
    for (const [scheduleId, next] of Object.entries(result.next)) {
      if (next === null) due.delete(scheduleId);
      else due.set(scheduleId, next);
    }
    // Workflow time: Date.now() is the time of the current workflow task, replayed identically.
    for (const scheduleId of result.failed) {
      due.set(scheduleId, Date.now() + RETRY_FAILED_MS);
      recover.add(scheduleId);
    }
  };

  for (let wakes = 0; ; wakes++) {
    if (wakes >= WAKES_PER_RUN || (wakes > 0 && workflowInfo().continueAsNewSuggested)) {
      await continueAsNew<typeof scheduleClockWorkflow>({
        shard,
        shards,
        due: Object.fromEntries(due),
        changed: [...changed],
        recover: [...recover],
        rescan,
      });
    }
    if (rescan) {
      rescan = false;
      changed.clear();
      const result = await fireSchedules({ shard, shards, scheduleIds: [], recover: [], rescan: true });
      // The store's list is the whole shard: a schedule not in it is gone.
      due.clear();
      recover.clear();
      apply(result);
      continue;
    }
    const now = Date.now();
    const look = new Set(changed);
    for (const [scheduleId, at] of due) if (at <= now) look.add(scheduleId);
    if (look.size > 0) {
      const scheduleIds = [...look].slice(0, LOOK_BATCH);
      for (const scheduleId of scheduleIds) changed.delete(scheduleId);
      const recovering = scheduleIds.filter((scheduleId) => recover.delete(scheduleId));
      apply(await fireSchedules({ shard, shards, scheduleIds, recover: recovering, rescan: false }));
      continue;
    }
    let earliest = Infinity;
    for (const at of due.values()) if (at < earliest) earliest = at;
    const woken = () => changed.size > 0 || rescan;
    if (earliest === Infinity) await condition(woken);
    else await condition(woken, earliest - now);
  }
}
