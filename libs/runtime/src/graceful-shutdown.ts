import type { INestApplicationContext } from '@nestjs/common';
import { Logger } from '@nestjs/common';
import { Readiness } from '@app/metrics';

export interface GracefulShutdownOptions {
  /** The service's name, for the log lines. */
  readonly name: string;
  /** SHUTDOWN_TIMEOUT_MS: from the signal to the exit, forced when it runs out. */
  readonly timeoutMs: number;
  /**
   * Stops taking work before the app closes: the HTTP server (it stops listening, ends its
   * streams and lets the requests in flight finish while every service is still there to answer
   * them). Nest would close it only after the modules' destroy hooks.
   */
  readonly closeFirst?: () => Promise<void>;
  /** Tests replace the exit; the default is process.exit. */
  readonly exit?: (code: number) => void;
}

const SIGNALS = ['SIGTERM', 'SIGINT'] as const;

/**
 * Nest's enableShutdownHooks, bounded and answering to the orchestrator: on SIGTERM (or SIGINT)
 * /readyz turns 503 at once, so a balancer drains the instance (the API's HTTP server, closed
 * first, refuses new connections instead, which drains it the same), then the app closes (each
 * service lets its in-flight work finish or hands it back in its hooks) and the process exits 0.
 * When closing has not finished within `timeoutMs` the process exits 1 with a log line saying
 * so; a second signal forces that exit at once. Nest's own handler re-raises the signal, which
 * ends the process as killed rather than with a status a supervisor can read.
 */
export function closeOnShutdownSignals(app: INestApplicationContext, options: GracefulShutdownOptions): void {
  const shutdown = shutdownHandler(app, options);
  for (const signal of SIGNALS) process.on(signal, shutdown);
}

/** What closeOnShutdownSignals runs on each signal, by itself for tests. */
export function shutdownHandler(app: INestApplicationContext, options: GracefulShutdownOptions): (signal: string) => void {
  const exit = options.exit ?? ((code: number) => process.exit(code));
  const logger = new Logger(options.name);
  let startedAt: number | undefined;

  return (signal: string) => {
    if (startedAt !== undefined) {
      logger.error(`${signal} during shutdown: exiting now`);
      return exit(1);
    }
    startedAt = Date.now();
    logger.log(`${signal}: shutting down (SHUTDOWN_TIMEOUT_MS ${options.timeoutMs})`);
    const deadline = setTimeout(() => {
      logger.error(`shutdown did not finish within SHUTDOWN_TIMEOUT_MS (${options.timeoutMs} ms): forcing exit`);
      exit(1);
    }, options.timeoutMs);
    markNotReady(app);
    const closeFirst = options.closeFirst ?? (() => Promise.resolve());
    closeFirst()
      .then(() => app.close())
      .then(
        () => {
          clearTimeout(deadline);
          logger.log(`shut down in ${Date.now() - startedAt!} ms`);
          exit(0);
        },
        (error: unknown) => {
          clearTimeout(deadline);
          logger.error(`shutdown failed: ${error instanceof Error ? error.message : String(error)}`);
          exit(1);
        },
      );
  };
}

/** /readyz answers 503 naming `shutdown` from now on: no balancer sends this instance anything new. */
function markNotReady(app: INestApplicationContext): void {
  const readiness = app.get(Readiness, { strict: false });
  readiness.add('shutdown', () => Promise.reject(new Error('shutting down')));
}
