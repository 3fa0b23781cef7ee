import type { OtelSdk } from './otel-sdk';
import { otlpTracesUrlFromEnv } from './tracing.config';

let running: { readonly sdk: OtelSdk; users: number } | undefined;

/** What a started service holds: stop() exports the spans still batched (at most once). */
export interface Tracing {
  readonly enabled: boolean;
  stop(): Promise<void>;
}

/**
 * Turns tracing on for this process when OTEL_EXPORTER_OTLP_ENDPOINT is set, naming its spans'
 * service `serviceName`. The SDK is a global of the process: a second start (tests booting
 * several apps in one process) shares the first one's, and the last stop shuts it down.
 * Unset, nothing is loaded but @opentelemetry/api, whose calls are then no-ops.
 */
export async function startTracing(serviceName: string, env: NodeJS.ProcessEnv = process.env): Promise<Tracing> {
  const url = otlpTracesUrlFromEnv(env);
  if (!url) return { enabled: false, stop: async () => undefined };
  if (!running) {
    // Loaded only when chosen, like the NATS and Temporal adapters (BENCHMARKS.md, "Footprint").
    const { startOtelSdk } = await import('./otel-sdk');
    running = { sdk: startOtelSdk(serviceName, url), users: 0 };
  }
  const own = running;
  own.users++;
  let stopped = false;
  return {
    enabled: true,
    async stop() {
      if (stopped) return;
      stopped = true;
      if (--own.users > 0 || running !== own) return;
      running = undefined;
      await own.sdk.shutdown();
    },
  };
}

/** The running SDK, for Temporal's workflow span sink; undefined while tracing is off. */
export function runningOtelSdk(): OtelSdk | undefined {
  return running?.sdk;
}

/**
 * Stops `tracing` once `app` has shut down, so the spans still batched (and those of the shutdown)
 * are exported. Nest ends both app.close() and the signal handlers of enableShutdownHooks (which
 * do not call close) with its shutdown hooks; stopping after them covers both ways out.
 */
export function stopTracingOnClose(app: object, tracing: Tracing): void {
  if (!tracing.enabled) return;
  type ShutdownHooks = (this: unknown, signal?: string) => Promise<void>;
  // The method itself, from the prototype: read through the proxy below, it would come back
  // wrapped in a function that looks the name up again, finding the replacement.
  const shutdownHooks = (Object.getPrototypeOf(app) as { callShutdownHook?: ShutdownHooks }).callShutdownHook;
  if (!shutdownHooks) throw new Error('stopTracingOnClose needs a Nest application');
  // Defined, not assigned: the app NestFactory returns is a proxy that drops assignments, while
  // defineProperty reaches the application itself, where Nest's own calls find it.
  Object.defineProperty(app, 'callShutdownHook', {
    configurable: true,
    writable: true,
    value: async function (this: unknown, signal?: string) {
      try {
        await shutdownHooks.call(this, signal);
      } finally {
        await tracing.stop();
      }
    },
  });
}
