import { Logger, LogLevel } from '@nestjs/common';
import { DefaultLogger, IllegalStateError, LogLevel as TemporalLevel, Runtime } from '@temporalio/worker';

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
