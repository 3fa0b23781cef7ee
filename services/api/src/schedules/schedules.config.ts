import { intFromEnv } from '@app/common';

/** The schedules' settings (docs/operations/configuration.md lists each). */
export class SchedulesConfig {
  readonly maxPerTenant: number;
  /** The shortest gap a cron may leave between two due times. Tests lower it to fire every second. */
  readonly minIntervalMs: number;
  /** A due time missed while no firer ran still fires if younger than this; older ones are recorded skipped. */
  readonly catchupMs: number;

  constructor(env: NodeJS.ProcessEnv) {
    this.maxPerTenant = intFromEnv(env, 'MAX_SCHEDULES_PER_TENANT', 100, { min: 1 });
    this.minIntervalMs = intFromEnv(env, 'SCHEDULE_MIN_INTERVAL_MS', 60_000, { min: 1000 });
    this.catchupMs = intFromEnv(env, 'SCHEDULE_CATCHUP_MS', 3_600_000, { min: 0 });
  }
}
