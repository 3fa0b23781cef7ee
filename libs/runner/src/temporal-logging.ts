import type { LogLevel } from '@nestjs/common';
import { Logger } from '@nestjs/common';
// Types only: the SDK is loaded when RUNNER=temporal is chosen, never by an all-in-one start (see createDurableRunner).
import type { LogLevel as TemporalLevel } from '@temporalio/worker';

/** Temporal's level for each of ours: Temporal filters before formatting anything. */
const TEMPORAL_LEVEL: Readonly<Record<LogLevel, TemporalLevel>> = {
  fatal: 'ERROR',
  error: 'ERROR',
  warn: 'WARN',
  log: 'INFO',
  debug: 'DEBUG',
  verbose: 'TRACE',
};

/**
 * Temporal's worker logs (and its core's, forwarded) through the service's logger, as JSON lines
 * with the rest, instead of its own text on stderr; its metadata (task queue, workflow id, …)
 * become fields. Must run before anything touches Temporal's Runtime; if something did (another
 * app in the same process, a test), that one's logger stays.
 */
export function logTemporalThroughNest(level: LogLevel): void {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded only when chosen, see above
  const { DefaultLogger, IllegalStateError, Runtime } = require('@temporalio/worker') as typeof import('@temporalio/worker');
  const logger = new Logger('Temporal');
  const write = { ERROR: 'error', WARN: 'warn', INFO: 'log', DEBUG: 'debug', TRACE: 'verbose' } as const;
  try {
    Runtime.install({
      logger: new DefaultLogger(TEMPORAL_LEVEL[level], ({ level: entryLevel, message, meta }) =>
        logger[write[entryLevel]]({ msg: message, ...meta }),
      ),
    });
  } catch (error) {
    if (!(error instanceof IllegalStateError)) throw error;
  }
}
