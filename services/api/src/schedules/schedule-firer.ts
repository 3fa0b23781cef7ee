import type { ScheduleState } from '@app/task-domain';

/**
 * Wakes schedules at their due times (docs/api.md "Schedules"): `TimerScheduleFirer` in the
 * all-in-one mode, `TemporalScheduleFirer` (a workflow per schedule) in the distributed mode,
 * chosen by RUNNER. Either hands the firing to ScheduleFiring. The routes that change a schedule
 * tell it here, so the change counts at once.
 */
export abstract class ScheduleFirer {
  /** A schedule was created, updated, paused, resumed or deleted through this process. */
  abstract track(state: ScheduleState): void;
}
