import { Logger } from '@nestjs/common';
import type { EventStore } from '@app/event-store';
import type { Readiness } from '@app/metrics';
import { createScheduleClock, logTemporalThroughNest, runnerConfigFromEnv } from '@app/runner';
import { logLevelFromEnv } from '@app/runtime';
import type { ScheduleBook } from './schedule-book';
import type { ScheduleFirer } from './schedule-firer';
import type { ScheduleFiring } from './schedule-firing';
import { lookAtSchedules } from './schedule-looks';
import { TemporalScheduleFirer } from './temporal-schedule-firer';
import { TimerScheduleFirer } from './timer-schedule-firer';

/**
 * The clock of the schedules goes with the runner of the agent loops (docs/api.md "Schedules"):
 * `RUNNER=temporal` puts the schedules on Temporal workflows, a clock per shard of them,
 * `RUNNER=in-process` on this process's own timer over the event store.
 */
export function scheduleFirer(
  env: NodeJS.ProcessEnv,
  firing: ScheduleFiring,
  book: ScheduleBook,
  store: EventStore,
  readiness: Readiness,
): ScheduleFirer {
  const logger = new Logger('Schedules');
  const runner = runnerConfigFromEnv(env);
  if (runner.kind === 'temporal') logTemporalThroughNest(logLevelFromEnv(env));
  const clock = createScheduleClock(
    runner,
    (look) =>
      lookAtSchedules(look, firing, book, (scheduleId, error) => logger.error(`schedule ${scheduleId}: firing failed: ${String(error)}`)),
    (what, error) => logger.error(`schedules ${what}: firing failed: ${String(error)}`),
  );
  return clock ? new TemporalScheduleFirer(clock, readiness) : new TimerScheduleFirer(book, firing, store);
}
