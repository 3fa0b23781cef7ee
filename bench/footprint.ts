import { loadavg } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { startScriptedOpenAiServer } from '@app/model-provider/testing/scripted-openai-server';
import { compiledEntry } from '../test/support/compiled-entry';
import { freePort } from '../test/support/service-process';
import type { ChildService } from './lib/child-service';
import { benchServiceEnv, startChildService } from './lib/child-service';
import { procMemoryMiB } from './lib/proc-memory';
import type { Summary } from './lib/stats';
import { summarize } from './lib/stats';
import { cpuMs } from './lib/proc-cpu';
import { sleep, withTimeout } from './lib/timing';
import { makeTmpDir, removeDir } from './lib/tmp-dir';

/** The child's memory at one moment: the kernel's view plus V8's breakdown (MiB). */
export interface MemorySample {
  readonly rssMiB: number;
  /** VmHWM: the highest RSS so far. */
  readonly peakMiB: number;
  /** process.memoryUsage() inside the child, printed on SIGWINCH (scripts/print-memory-on-signal.js). */
  readonly usage?: { heapTotal: number; heapUsed: number; external: number; arrayBuffers: number };
}

export interface CreateBatchFigures {
  readonly tasks: number;
  readonly wallS: number;
  /** Tasks created and with their turn completed, per second of the batch's wall time. */
  readonly completedPerS: number;
  /** POST /api/v1/tasks round trip (request sent → 201 body read), one sample per task. */
  readonly createLatency: Summary;
  /** GET /api/v1/tasks/{id} calls per task until it showed `completed`. */
  readonly pollsPerTask: number;
  /** The service's CPU time (user + system) during the batch, per task: what bounds the rate, less disturbed by other load than the wall time. */
  readonly serviceCpuMsPerTask: number;
  readonly modelCalls: number;
  /** Memory after the batch and `idleS` seconds of idling (no GC forced). */
  readonly memory: MemorySample;
  /** 1-minute load average when the batch ended. */
  readonly loadAtEnd: number;
}

export interface FootprintFigures {
  readonly concurrency: number;
  readonly idleAfterStartS: number;
  readonly idleAfterBatchS: number;
  /** Spawn of `node dist/.../main.js` → the first /healthz 200 (polled every 10 ms). */
  readonly startMs: number;
  /** CPU time (user + system) the child had used when /healthz first answered 200. */
  readonly startCpuMs: number;
  readonly afterStart: MemorySample;
  /** 1-minute load average when the after-start sample was taken. */
  readonly loadAtStart: number;
  readonly batches: CreateBatchFigures[];
}

export interface FootprintOptions {
  readonly concurrency: number;
  readonly tasksPerBatch: number;
  readonly batches: number;
  readonly idleAfterStartS: number;
  readonly idleAfterBatchS: number;
  /** When set, the child runs with --cpu-prof into this directory (written when it stops). */
  readonly cpuProfDir?: string;
  readonly log: (line: string) => void;
}

const ROOT = join(__dirname, '..');
const API_KEY = 'bench-key';
/** Bounds: one task's turn, one batch, one HTTP call, the memory line after SIGWINCH. */
const TASK_TIMEOUT_MS = 30_000;
const BATCH_TIMEOUT_MS = 5 * 60_000;
const CALL_TIMEOUT_MS = 10_000;
const MEMORY_LINE_TIMEOUT_MS = 5_000;
/** Poll backoff while a task's turn runs: 5, 10, 20, 40, 50, 50 … ms. */
const FIRST_POLL_MS = 5;
const MAX_POLL_MS = 50;

/**
 * Issue 19's footprint and throughput targets, embedded mode: the all-in-one service as a child
 * on a fresh DATA_DIR, its start time and RSS, then batches of tasks created closed-loop by
 * `concurrency` workers (each creates a task and waits until its one model turn has completed,
 * then creates the next) with the RSS after each batch. The scripted model answers at once.
 */
export async function benchFootprint(options: FootprintOptions): Promise<FootprintFigures> {
  const dataDir = await makeTmpDir('footprint');
  const model = await startScriptedOpenAiServer({ defaultReply: { text: 'ok' } });
  const port = await freePort();
  compiledEntry('services/standalone/src/main.ts'); // build (when stale) before the clock starts
  let service: ChildService | undefined;
  try {
    const spawnedAt = performance.now();
    service = await startChildService({
      port,
      healthPollMs: 10,
      cpuProfDir: options.cpuProfDir,
      bootTimeoutMs: 60_000,
      nodeArgs: ['-r', join(ROOT, 'scripts/print-memory-on-signal.js')],
      env: {
        ...benchServiceEnv(dataDir, API_KEY, model.url),
        LOG_LEVEL: 'warn',
      },
    });
    const startMs = performance.now() - spawnedAt;
    const pid = service.child.pid!;
    const startCpuMs = await cpuMs(pid);
    options.log(`footprint: /healthz 200 after ${startMs.toFixed(0)} ms (${startCpuMs} ms CPU); idling ${options.idleAfterStartS} s`);
    await sleep(options.idleAfterStartS * 1000);
    const afterStart = await memorySample(service);
    const loadAtStart = loadAverage();
    options.log(`footprint: RSS after start ${afterStart.rssMiB} MiB`);

    const batches: CreateBatchFigures[] = [];
    for (let b = 1; b <= options.batches; b++) {
      options.log(`footprint: batch ${b}: ${options.tasksPerBatch} tasks, ${options.concurrency} closed-loop workers`);
      const modelCallsBefore = model.requests.length;
      const cpuBefore = await cpuMs(pid);
      const child = service;
      const run = await createBatch(service.url, options.tasksPerBatch, options.concurrency).catch((error: unknown) => {
        throw new Error(`batch ${b}: ${explain(error)}${childState(child)}`);
      });
      const serviceCpuMsPerTask = ((await cpuMs(pid)) - cpuBefore) / options.tasksPerBatch;
      const modelCalls = model.requests.length - modelCallsBefore;
      if (modelCalls !== options.tasksPerBatch)
        throw new Error(`batch ${b}: the model got ${modelCalls} calls for ${options.tasksPerBatch} tasks (expected one turn each)`);
      await sleep(options.idleAfterBatchS * 1000);
      const memory = await memorySample(service);
      const batch: CreateBatchFigures = {
        tasks: options.tasksPerBatch,
        wallS: run.wallMs / 1000,
        completedPerS: options.tasksPerBatch / (run.wallMs / 1000),
        createLatency: summarize(run.latencies),
        pollsPerTask: run.polls / options.tasksPerBatch,
        serviceCpuMsPerTask,
        modelCalls,
        memory,
        loadAtEnd: loadAverage(),
      };
      batches.push(batch);
      options.log(
        `footprint: batch ${b}: ${batch.completedPerS.toFixed(0)} tasks/s, create p99 ${batch.createLatency.p99.toFixed(1)} ms, RSS ${memory.rssMiB} MiB`,
      );
    }
    return {
      concurrency: options.concurrency,
      idleAfterStartS: options.idleAfterStartS,
      idleAfterBatchS: options.idleAfterBatchS,
      startMs,
      startCpuMs,
      afterStart,
      loadAtStart,
      batches,
    };
  } finally {
    await service?.stop().catch(() => undefined);
    await model.close().catch(() => undefined);
    await removeDir(dataDir);
  }
}

interface BatchRun {
  readonly wallMs: number;
  readonly latencies: number[];
  readonly polls: number;
}

/** `tasks` tasks by `concurrency` workers, each: POST, then poll until completed. First error stops all. */
async function createBatch(baseUrl: string, tasks: number, concurrency: number): Promise<BatchRun> {
  const latencies: number[] = [];
  let issued = 0;
  let polls = 0;
  let failed = false;
  const deadline = Date.now() + BATCH_TIMEOUT_MS;
  const headers = { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' };
  const body = JSON.stringify({ message: 'bench' });

  const worker = async (): Promise<void> => {
    while (!failed && issued < tasks) {
      issued++;
      if (Date.now() > deadline) throw new Error(`the batch of ${tasks} tasks did not finish within ${BATCH_TIMEOUT_MS / 1000} s`);
      const sentAt = performance.now();
      const response = await fetch(`${baseUrl}/api/v1/tasks`, {
        method: 'POST',
        headers,
        body,
        signal: AbortSignal.timeout(CALL_TIMEOUT_MS),
      });
      const text = await response.text();
      latencies.push(performance.now() - sentAt);
      if (response.status !== 201) throw new Error(`POST /api/v1/tasks: HTTP ${response.status} ${text.slice(0, 300)}`);
      const id = (JSON.parse(text) as { data: { id: string } }).data.id;
      const taskPolls = await waitCompleted(baseUrl, id); // not `polls += await …`: that loses other workers' counts
      polls += taskPolls;
    }
  };

  const startedAt = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, () =>
      worker().catch((error: unknown) => {
        failed = true;
        throw error;
      }),
    ),
  );
  return { wallMs: performance.now() - startedAt, latencies, polls };
}

/** Polls the task until `completed`; returns the number of GETs. Throws on failed/cancelled or after TASK_TIMEOUT_MS. */
async function waitCompleted(baseUrl: string, id: string): Promise<number> {
  const deadline = Date.now() + TASK_TIMEOUT_MS;
  let delay = FIRST_POLL_MS;
  for (let polls = 1; ; polls++) {
    await sleep(delay);
    const response = await fetch(`${baseUrl}/api/v1/tasks/${id}`, {
      headers: { authorization: `Bearer ${API_KEY}` },
      signal: AbortSignal.timeout(CALL_TIMEOUT_MS),
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`GET /api/v1/tasks/${id}: HTTP ${response.status} ${text.slice(0, 300)}`);
    const task = (JSON.parse(text) as { data: { status: string; error?: unknown } }).data;
    if (task.status === 'completed') return polls;
    if (task.status === 'failed' || task.status === 'cancelled')
      throw new Error(`task ${id} ended ${task.status}: ${JSON.stringify(task.error ?? null).slice(0, 300)}`);
    if (Date.now() > deadline) throw new Error(`task ${id} was still ${task.status} after ${TASK_TIMEOUT_MS} ms`);
    delay = Math.min(delay * 2, MAX_POLL_MS);
  }
}

/** The message with its cause (undici's "fetch failed" hides the reason there). */
function explain(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  return error.cause === undefined ? error.message : `${error.message} (${explain(error.cause)})`;
}

function childState(service: ChildService): string {
  const { exitCode, signalCode } = service.child;
  const state = exitCode === null && signalCode === null ? 'running' : `exited (${exitCode ?? signalCode})`;
  return `; the service is ${state}, its last output: ${service.output().slice(-2_000)}`;
}

/** VmRSS and VmHWM from /proc, and the child's process.memoryUsage() via SIGWINCH. */
async function memorySample(service: ChildService): Promise<MemorySample> {
  const memory = await procMemoryMiB(service.child.pid!);
  if (!memory) throw new Error(`no /proc/${service.child.pid}/status`);
  const line = await withTimeout('the memoryUsage line after SIGWINCH', nextMemoryLine(service), MEMORY_LINE_TIMEOUT_MS);
  const field = (name: string): number => Number(new RegExp(`${name}=(\\d+)`).exec(line)?.[1] ?? Number.NaN);
  return {
    ...memory,
    usage: { heapTotal: field('heapTotal'), heapUsed: field('heapUsed'), external: field('external'), arrayBuffers: field('arrayBuffers') },
  };
}

/** Sends SIGWINCH and resolves with the `memoryUsage MiB …` line the child prints in answer. */
function nextMemoryLine(service: ChildService): Promise<string> {
  return new Promise((resolve) => {
    let text = '';
    const onData = (chunk: Buffer): void => {
      text += chunk.toString('utf8');
      const match = /memoryUsage MiB [^\n]*\n/.exec(text);
      if (!match) return;
      service.child.stderr!.off('data', onData);
      resolve(match[0].trim());
    };
    service.child.stderr!.on('data', onData);
    service.child.kill('SIGWINCH');
  });
}

const loadAverage = (): number => Math.round(loadavg()[0] * 100) / 100;
