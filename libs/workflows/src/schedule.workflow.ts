import { condition, continueAsNew, proxyActivities, setHandler, workflowInfo } from '@temporalio/workflow';
import type { ScheduleActivities, ScheduleClockInput } from './activities.types';
import { scheduleChangedSignal } from './schedule.signals';

// One workflow per schedule (docs/api.md "Schedules", the distributed mode): a durable timer in
// the Temporal server that survives every process of ours. Its id comes from the schedule's id
// (scheduleWorkflowId), so a schedule has at most one open run. The workflow decides nothing: at
// each wake its activity fires every due time of the schedule up to now through the schedule's
// event stream, where exactly once per due time is decided (a retried activity finds the run
// recorded and starts nothing twice), and answers with the next due time to sleep until. The
// input is the schedule's id only: its task, secrets and cron never enter workflow history.

/** Workflow ids start with this prefix, then the schedule's id. */
export const SCHEDULE_WORKFLOW_ID_PREFIX = 'schedule-';

export function scheduleWorkflowId(prefix: string, scheduleId: string): string {
  return `${prefix}${scheduleId}`;
}

/** Wakes of one run before it continues as new (each adds about eleven history events). */
const WAKES_PER_RUN = 200;

const { fireDue } = proxyActivities<ScheduleActivities>({
  // A wake fires what is due: one run each, or up to a thousand missed ones after a long stop.
  startToCloseTimeout: '10 minutes',
  // The activity heartbeats on a timer, so a silent one means a dead worker: retried elsewhere soon.
  heartbeatTimeout: '5 seconds',
  // Retried until it succeeds (a store that is down comes back): a schedule never gives up firing.
  retry: { initialInterval: '500ms', backoffCoefficient: 2, maximumInterval: '1 minute' },
});

export async function scheduleWorkflow(input: ScheduleClockInput): Promise<void> {
  /** Changes signalled, and how many of them the last fireDue had seen. */
  let changes = 0;
  setHandler(scheduleChangedSignal, () => {
    changes++;
  });
  for (let wakes = 0; ; wakes++) {
    if (wakes >= WAKES_PER_RUN || (wakes > 0 && workflowInfo().continueAsNewSuggested)) {
      await continueAsNew<typeof scheduleWorkflow>({ ...input, recover: false });
    }
    const seen = changes;
    // The first wake of a run that was not continued from another looks for a run recorded but
    // not started (the stream says fired, the task does not exist): a crash between the two.
    const wake = await fireDue({ scheduleId: input.scheduleId, recover: wakes === 0 && input.recover !== false });
    if (wake.gone) return;
    const changed = () => changes > seen;
    if (changed()) continue;
    if (wake.nextDueAt === undefined) {
      await condition(changed); // paused, or a cron with no due time left: until it changes
    } else {
      // Workflow time: Date.now() is the time of the current workflow task, replayed identically.
      const ms = wake.nextDueAt - Date.now();
      if (ms > 0) await condition(changed, ms);
    }
  }
}
