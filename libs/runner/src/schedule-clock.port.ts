import type { ScheduleLook, ScheduleLookResult } from '@app/workflows';

export type { ScheduleLook, ScheduleLookResult };

/** Fires every due time up to now of each schedule looked at, and answers each one's next due time. */
export type FireSchedules = (look: ScheduleLook) => Promise<ScheduleLookResult>;

/**
 * Wakes the schedules at their due times, durably, in the distributed mode (Temporal: a clock
 * workflow per shard of the schedules). The all-in-one mode's clock is the API's own timer over
 * the event store.
 */
export interface ScheduleClock {
  /** Connects and begins waking schedules through fireSchedules. */
  start(): Promise<void>;
  /**
   * Makes sure every shard's clock runs, and has each look at all its schedules from the store
   * (a process that recorded a change may have stopped before telling the clock).
   */
  rescan(): Promise<void>;
  /** The schedule changed (created, updated, paused, resumed, deleted): it is looked at again now. */
  changed(scheduleId: string): Promise<void>;
  /** Resolves once the clock's server answers (readiness). */
  ping(): Promise<void>;
  stop(): Promise<void>;
}
