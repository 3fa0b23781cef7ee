import { performance } from 'node:perf_hooks';
import { startScriptedOpenAiServer } from '@app/model-provider/testing/scripted-openai-server';
import { freePort } from '../test/support/service-process';
import { ApiClient } from './lib/api-client';
import type { ChildService } from './lib/child-service';
import { benchServiceEnv, benchWebhookEnv, startChildService } from './lib/child-service';
import { processSchedSample, schedBetween, threadSchedSamples, threadsBetween } from './lib/schedstat';
import { sleep } from './lib/timing';
import { makeTmpDir, removeDir } from './lib/tmp-dir';

export interface WebhookBacklogFigures {
  /** Tasks created, each with one task.completed message for a receiver that is down. */
  readonly messages: number;
  /** Attempts made in the measured window (the retries, once every first attempt had failed). */
  readonly attempts: number;
  /**
   * The service's CPU (every thread) in that window, less what it used idle over as long (measured
   * before the tasks), per attempt: the cost of one retry with `messages` pending.
   */
  readonly cpuPerAttemptUs: number;
  /** The service idle, before the tasks, polled as in the window: CPU ms per second (timers, checkpoints, GC, the polls). */
  readonly idleCpuMsPerS: number;
  readonly windowMs: number;
  /** The service's threads on a CPU in the window, by name (see threadsBetween), busiest first. */
  readonly threads: readonly { name: string; onCpuMs: number }[];
}

export interface WebhookBacklogOptions {
  readonly messages: number;
  /** When set, the child runs with --cpu-prof into this directory. */
  readonly cpuProfDir?: string;
  readonly log: (line: string) => void;
}

/** Creates in flight at once while the backlog is built. */
const CREATE_CONCURRENCY = 16;
/** First retry this long after a failed attempt (doubled for the next), so no retry comes before every task is created. */
const RETRY_BASE_MS = 15_000;
const MAX_ATTEMPTS = 3;
const WAIT_BOUND_MS = 180_000;
/** How long the idle service is watched before the tasks. */
const IDLE_SAMPLE_MS = 5_000;
/** Between two reads of GET /metrics. */
const POLL_MS = 500;

/**
 * Benchmark 8c: the dispatcher with a backlog. The receiver is down (nothing listens on its port,
 * so every attempt is refused at once), `messages` tasks complete and each makes a message due;
 * every first attempt fails, then the retries come, 15 s and 30 s (± jitter) later. Measured:
 * the service's CPU per retry while all of them are pending, which says whether the dispatcher's
 * work per attempt grows with the backlog (a receiver outage of a busy deployment).
 */
export async function benchWebhookBacklog(options: WebhookBacklogOptions): Promise<WebhookBacklogFigures> {
  const deadPort = await freePort();
  const model = await startScriptedOpenAiServer({ defaultReply: { text: 'done' } });
  const dataDir = await makeTmpDir('webhook-backlog');
  let service: ChildService | undefined;
  try {
    service = await startChildService({
      port: await freePort(),
      cpuProfDir: options.cpuProfDir,
      env: {
        ...benchServiceEnv(dataDir, 'bench-key', model.url),
        ...benchWebhookEnv(`127.0.0.1:${deadPort}`),
        WEBHOOK_RETRY_BASE_MS: String(RETRY_BASE_MS),
        WEBHOOK_MAX_ATTEMPTS: String(MAX_ATTEMPTS),
        WEBHOOK_TIMEOUT_MS: '2000',
      },
    });
    const api = new ApiClient(service.url, 'bench-key');
    const outcomes = () => deliveryOutcomes(service!.url);

    const idleFrom = processSchedSample(service.child.pid!);
    const idleStart = performance.now();
    // Polled as the window is, so that the polling's own cost is in the baseline.
    for (const until = Date.now() + IDLE_SAMPLE_MS; Date.now() < until;) {
      await outcomes();
      await sleep(POLL_MS);
    }
    const idle = schedBetween(idleFrom, processSchedSample(service.child.pid!));
    const idleCpuMsPerS = idle ? idle.onCpuMs / ((performance.now() - idleStart) / 1000) : Number.NaN;

    options.log(`webhook backlog: ${options.messages} tasks, receiver down`);
    let next = 0;
    await Promise.all(
      Array.from({ length: CREATE_CONCURRENCY }, async () => {
        while (next < options.messages) {
          next++;
          await api.createTask(`backlog ${next}`);
        }
      }),
    );
    const built = await waitFor(outcomes, (o) => o.failed >= options.messages, 'every first attempt to fail');
    if (built.failed > options.messages) throw new Error('retries began before every first attempt had failed: raise RETRY_BASE_MS');
    const before = processSchedSample(service.child.pid!);
    const threadsBefore = threadSchedSamples(service.child.pid!);
    const startedAt = performance.now();
    const windowFromUs = process.hrtime.bigint() / 1000n;
    options.log('webhook backlog: every first attempt failed; waiting for the retries');
    const done = await waitFor(outcomes, (o) => o.gaveUp >= options.messages, 'every message to be given up');
    const windowMs = performance.now() - startedAt;
    // The window on the host's monotonic clock, to pick it out of a --cpu-prof profile (cpuprofile-summary.ts --from --to).
    options.log(`webhook backlog: window, monotonic µs: ${windowFromUs} ${process.hrtime.bigint() / 1000n}`);
    const cpu = schedBetween(before, processSchedSample(service.child.pid!));
    const threads = threadsBetween(service.child.pid!, threadsBefore, threadSchedSamples(service.child.pid!));
    const attempts = done.failed + done.gaveUp - built.failed;
    return {
      messages: options.messages,
      attempts,
      cpuPerAttemptUs: cpu ? ((cpu.onCpuMs - idleCpuMsPerS * (windowMs / 1000)) * 1000) / attempts : Number.NaN,
      idleCpuMsPerS,
      windowMs,
      threads: threads.filter((t) => t.onCpuMs >= 1),
    };
  } finally {
    await service?.stop();
    await model.close().catch(() => undefined);
    await removeDir(dataDir);
  }
}

/** The delivery attempts counted so far (ats_webhook_deliveries_total, GET /metrics). */
async function deliveryOutcomes(baseUrl: string): Promise<{ failed: number; gaveUp: number }> {
  const text = await (await fetch(`${baseUrl}/metrics`, { signal: AbortSignal.timeout(10_000) })).text();
  const count = (outcome: string) =>
    Number(new RegExp(`^ats_webhook_deliveries_total\\{outcome="${outcome}"\\} (\\d+)`, 'm').exec(text)?.[1] ?? 0);
  return { failed: count('failed'), gaveUp: count('gave_up') };
}

/** Polls `read` every POLL_MS until `done` holds; fails past WAIT_BOUND_MS, naming what it waited for. */
async function waitFor<T>(read: () => Promise<T>, done: (value: T) => boolean, what: string): Promise<T> {
  const until = Date.now() + WAIT_BOUND_MS;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > until) throw new Error(`waited ${WAIT_BOUND_MS} ms for ${what}; last: ${JSON.stringify(value)}`);
    await sleep(POLL_MS);
  }
}
