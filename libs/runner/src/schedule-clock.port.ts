import type { ScheduleWake } from '@app/workflows';

export type { ScheduleWake };

/** Fires every due time of a schedule up to now (`recover`: first start a run recorded but not started). */
export type FireDue = (scheduleId: string, recover: boolean) => Promise<ScheduleWake>;

/**
 * Wakes each schedule at its due times, durably, in the distributed mode (Temporal: one workflow
 * per schedule). The all-in-one mode's clock is the API's own timer over the event store.
 */
export interface ScheduleClock {
  /** Connects and begins waking schedules through fireDue. */
  start(): Promise<void>;
  /** Makes sure each schedule is on the clock, without waking the ones that are. */
  ensure(scheduleIds: readonly string[]): Promise<void>;
  /** The schedule changed (created, updated, paused, resumed, deleted): it is looked at again now. */
  changed(scheduleId: string): Promise<void>;
  /** Resolves once the clock's server answers (readiness). */
  ping(): Promise<void>;
  stop(): Promise<void>;
}
