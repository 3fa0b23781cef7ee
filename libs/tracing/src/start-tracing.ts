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
