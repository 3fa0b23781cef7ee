import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** Seconds: from a fast in-memory call to a slow model reply or tool run. */
const LATENCY_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];
/**
 * Seconds of what a tool call bounds: a tool run in the sandbox, and a bus request (the longest
 * bounded one is a tool call). Both last up to TOOL_TIMEOUT_MS (10 minutes by default), so the
 * buckets reach past it and a call that ran to its timeout still lands in a finite bucket, not
 * only in +Inf; 900 and 1800 s keep a raised TOOL_TIMEOUT_MS in view.
 */
const TOOL_BOUNDED_BUCKETS = [...LATENCY_BUCKETS, 600, 900, 1800];
/** Seconds a tool call waits for a person: minutes to hours. */
const APPROVAL_WAIT_BUCKETS = [1, 5, 15, 30, 60, 300, 900, 1800, 3600, 4 * 3600, 24 * 3600];

/** The conventions' advised boundaries of `gen_ai.client.token.usage`: powers of 4 up to 64 Mi tokens. */
const GEN_AI_TOKEN_BUCKETS = [1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864];
/** The conventions' advised boundaries of `gen_ai.client.operation.duration`, seconds: 10 ms doubling to 82 s. */
const GEN_AI_DURATION_BUCKETS = [0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92];
/** The GenAI metrics' attributes as Prometheus labels (dots become underscores); each metric uses those that apply. */
const GEN_AI_LABELS = [
  'gen_ai_operation_name',
  'gen_ai_provider_name',
  'gen_ai_request_model',
  'gen_ai_response_model',
  'gen_ai_token_type',
  'error_type',
] as const;

/** Labels of `tasks`: every status a task view can have, so a status with no task reads 0, not absent. */
export const TASK_STATUSES = ['pending', 'running', 'awaiting_approval', 'completed', 'failed', 'cancelled'] as const;

/**
 * Every metric one process exposes at `GET /metrics`, in one registry. Each Nest application
 * makes its own (RuntimeModule provides it), so the all-in-one mode serves one set for all four
 * services and tests that start several apps in one process register nothing twice. Beside ours
 * (`ats_…`), prom-client's default process and Node.js metrics, under their standard unprefixed
 * names (`process_cpu_seconds_total`, `nodejs_heap_size_used_bytes`, …) that the usual Node.js
 * dashboards query.
 *
 * Label values are always bounded: a route template (never a path with ids), a tool name from
 * the built-in list or `mcp`, a bus subject with instance ids collapsed, a tenant id (as many
 * as the operator configured: API_KEYS, API_KEYS_FILE); never a task id or a tenant's API key.
 */
export class ServiceMetrics {
  readonly registry = new Registry();

  readonly httpRequestDuration = new Histogram({
    name: 'ats_http_request_duration_seconds',
    help: 'HTTP requests answered, by method, route template and status code',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });

  readonly turnsStarted = new Counter({
    name: 'ats_turns_started_total',
    help: 'Agent turns started (recorded by this process)',
    registers: [this.registry],
  });

  readonly turnsFinished = new Counter({
    name: 'ats_turns_finished_total',
    help: 'Agent turns ended, by outcome (completed, failed, cancelled)',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });

  readonly modelCallDuration = new Histogram({
    name: 'ats_model_call_duration_seconds',
    help: 'Model completions, by model and outcome (ok, error)',
    labelNames: ['model', 'outcome'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });

  readonly modelTokens = new Counter({
    name: 'ats_model_tokens_total',
    help: 'Tokens the model read (in) and wrote (out), by model',
    labelNames: ['model', 'direction'] as const,
    registers: [this.registry],
  });

  /**
   * The OpenTelemetry GenAI client metrics (`gen_ai.client.token.usage`, `{token}`, and
   * `gen_ai.client.operation.duration`, `s`) under the names OpenTelemetry's Prometheus exporter
   * gives them: dots and the unit annotation out, `_seconds` in. Buckets and labels as the
   * conventions advise.
   */
  readonly genAiTokenUsage = new Histogram({
    name: 'gen_ai_client_token_usage',
    help: 'Tokens used per model call (gen_ai.client.token.usage), by token type (input, output), operation, provider and model',
    labelNames: GEN_AI_LABELS,
    buckets: GEN_AI_TOKEN_BUCKETS,
    registers: [this.registry],
  });

  readonly genAiOperationDuration = new Histogram({
    name: 'gen_ai_client_operation_duration_seconds',
    help: 'Model calls (gen_ai.client.operation.duration), by operation, provider, model and error type',
    labelNames: GEN_AI_LABELS,
    buckets: GEN_AI_DURATION_BUCKETS,
    registers: [this.registry],
  });

  readonly modelCost = new Counter({
    name: 'ats_model_cost_usd_total',
    help: 'USD of the model calls recorded by this process, by tenant, at the price table (calls without a price count in ats_model_calls_unpriced_total)',
    labelNames: ['tenant'] as const,
    registers: [this.registry],
  });

  readonly modelCallsUnpriced = new Counter({
    name: 'ats_model_calls_unpriced_total',
    help: 'Model calls recorded by this process whose model has no price (their usage.costUsd is null), by model',
    labelNames: ['model'] as const,
    registers: [this.registry],
  });

  readonly toolRunDuration = new Histogram({
    name: 'ats_tool_run_duration_seconds',
    help: 'Tool calls run by this sandbox instance, by tool (built-in name, or mcp) and status',
    labelNames: ['tool', 'status'] as const,
    buckets: TOOL_BOUNDED_BUCKETS,
    registers: [this.registry],
  });

  readonly toolCallsLost = new Counter({
    name: 'ats_tool_calls_lost_total',
    help: 'Tool calls ended as errors because the sandbox instance running them stopped renewing its lease (died or was cut off)',
    registers: [this.registry],
  });

  readonly approvalWait = new Histogram({
    name: 'ats_approval_wait_seconds',
    help: 'Time from a tool call asking for approval to its decision or expiry, by outcome',
    labelNames: ['outcome'] as const,
    buckets: APPROVAL_WAIT_BUCKETS,
    registers: [this.registry],
  });

  readonly eventStoreAppendDuration = new Histogram({
    name: 'ats_event_store_append_duration_seconds',
    help: 'Event store appends, by outcome (ok, conflict, error)',
    labelNames: ['outcome'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });

  readonly eventStoreConflicts = new Counter({
    name: 'ats_event_store_conflicts_total',
    help: 'Appends refused because the stream moved past the expected revision (optimistic concurrency)',
    registers: [this.registry],
  });

  readonly sseConnections = new Gauge({
    name: 'ats_sse_connections',
    help: 'Event streams (SSE) open on this API instance',
    registers: [this.registry],
  });

  readonly busRequestDuration = new Histogram({
    name: 'ats_bus_request_duration_seconds',
    help: 'Bus requests (request/reply), by subject and outcome (ok, timeout, error)',
    labelNames: ['subject', 'outcome'] as const,
    buckets: TOOL_BOUNDED_BUCKETS,
    registers: [this.registry],
  });

  readonly webhookDeliveries = new Counter({
    name: 'ats_webhook_deliveries_total',
    help: 'Webhook delivery attempts, by outcome (delivered, failed, gave_up)',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });

  private tasksByStatus?: () => ReadonlyMap<string, number>;
  private liveSandboxes?: () => number;

  constructor() {
    collectDefaultMetrics({ register: this.registry });
    // Read through arrows: inside collect(), `this` is the gauge.
    const countTasks = () => this.tasksByStatus?.();
    const countSandboxes = () => this.liveSandboxes?.();
    new Gauge({
      name: 'ats_tasks',
      help: 'Tasks by status, from the read model at scrape time (served by the API)',
      labelNames: ['status'] as const,
      registers: [this.registry],
      collect() {
        const counts = countTasks();
        if (counts) for (const status of TASK_STATUSES) this.set({ status }, counts.get(status) ?? 0);
      },
    });
    new Gauge({
      name: 'ats_sandboxes_live',
      help: 'Sandboxes (workspaces) this sandbox instance holds, at scrape time',
      registers: [this.registry],
      collect() {
        const live = countSandboxes();
        if (live !== undefined) this.set(live);
      },
    });
  }

  /** The API's read model answers `ats_tasks` (one source per process; the last one set wins). */
  countTasksWith(source: () => ReadonlyMap<string, number>): void {
    this.tasksByStatus = source;
  }

  /** The sandbox service's session registry answers `ats_sandboxes_live`. */
  countSandboxesWith(source: () => number): void {
    this.liveSandboxes = source;
  }

  /** The Prometheus text exposition of every metric. */
  async exposition(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: withoutNaN(await this.registry.metrics()) };
  }
}

/**
 * The event loop delay's mean and standard deviation read NaN when no delay was sampled since the
 * last scrape (two scrapes within its 10 ms resolution), which prom-client writes `Nan`: not the
 * text format's `NaN`, and strict parsers refuse both. A sample with no value is left out instead,
 * as Prometheus treats a series that did not answer.
 */
const withoutNaN = (body: string): string => body.replace(/^[^#\n][^\n]* Nan\n/gm, '');

/** Seconds since `startedAt` (a `performance.now()` reading), for histograms. */
export function secondsSince(startedAt: number): number {
  return (performance.now() - startedAt) / 1000;
}
