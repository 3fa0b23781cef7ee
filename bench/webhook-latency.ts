import { appendFileSync, statSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import type { ScriptedReply } from '@app/model-provider/testing/scripted-openai-server';
import { startScriptedOpenAiServer } from '@app/model-provider/testing/scripted-openai-server';
import { freePort } from '../test/support/service-process';
import { ApiClient } from './lib/api-client';
import type { ChildService } from './lib/child-service';
import { benchServiceEnv, benchWebhookEnv, startChildService } from './lib/child-service';
import { procMemoryMiB } from './lib/proc-memory';
import type { SchedSample } from './lib/schedstat';
import { processSchedSample, schedBetween, schedSample, threadSchedSamples, threadsBetween } from './lib/schedstat';
import type { WebhookArrival } from './lib/webhook-receiver-process';
import { startReceiverProcess } from './lib/webhook-receiver-process';
import type { Summary } from './lib/stats';
import { summarize } from './lib/stats';
import { sleep, waitUntil } from './lib/timing';
import { makeTmpDir, removeDir } from './lib/tmp-dir';

export interface WebhookLatencyFigures {
  readonly tasks: number;
  readonly warmupTasks: number;
  /**
   * Per task: its TurnCompleted's recorded time (the store's `recorded_at`, which the message
   * carries as `timestamp`) → the receiver had the whole request. One sample per task.
   */
  readonly latency: Summary;
  /** Diagnostic: recorded → the attempt's start as the deliveries endpoint shows it (detection, reads, claim). */
  readonly toAttemptStart: Summary;
  /** Diagnostic: the attempt's start → received (signing, HTTP on a pooled or new connection). */
  readonly attemptToReceived: Summary;
  /** How "at once" the tasks finished: first to last TurnCompleted recorded time. */
  readonly finishSpreadMs: number;
  /** Model replies released → the last message received. */
  readonly releaseToLastMs: number;
  /**
   * Release → the last message received (Linux schedstat): the service's main thread (models'
   * answers, completions, dispatcher, signing) and the bench's (the scripted model server): time
   * on a CPU, and time runnable but waiting for one (the machine's other load).
   */
  readonly serviceThread?: SchedSample;
  readonly benchThread?: SchedSample;
  /**
   * The same for every thread of a process summed: for the service, its main thread, the webhook
   * sender's worker thread, V8's compiler and GC helpers and libuv's pool; for the receiver
   * process, what receiving the burst cost.
   */
  readonly serviceProcess?: SchedSample;
  readonly benchProcess?: SchedSample;
  readonly receiverProcess?: SchedSample;
  /**
   * The service's threads on a CPU in the same window, busiest first (threadsBetween): `main` (the
   * event loop), then by thread id V8's helpers (compiler and GC) and, the newest, the webhook
   * sender's worker.
   */
  readonly serviceThreads: readonly { name: string; onCpuMs: number }[];
  /** task.completed messages of the measured tasks received, distinct by webhook-id, and repeats. */
  readonly received: number;
  readonly duplicates: number;
  /** Measured tasks whose delivery shows more than one attempt (a retry would distort the figure). */
  readonly retried: number;
  /** The service after the measured round (its webhook sender's worker thread running): VmRSS and VmHWM, MiB. */
  readonly serviceRssMiB?: number;
  readonly servicePeakMiB?: number;
}

export interface WebhookLatencyOptions {
  readonly tasks: number;
  readonly warmupTasks: number;
  /** Warm-up rounds of `warmupTasks` each before the measured one (the service's code runs hot for longer). */
  readonly warmupRounds?: number;
  /** Extra variables for the child (comparison runs). */
  readonly extraEnv?: Record<string, string>;
  /** When set, the child runs with --cpu-prof into this directory (the bursts' windows are logged for cpuprofile-summary.ts). */
  readonly cpuProfDir?: string;
  readonly log: (line: string) => void;
}

/** Bound on each wait; the whole benchmark is well inside run.ts's watchdog. */
const STEP_TIMEOUT_MS = 60_000;
/** How long to keep listening after the last expected message, to catch repeats. */
const LINGER_MS = 1_000;

/**
 * Benchmark 8: webhooks of many tasks finishing at once. The all-in-one service runs as a child
 * (embedded store) with WEBHOOK_URL pointing at a real HTTP receiver in a third process; the
 * scripted model holds every reply until released, so N tasks wait in their model call and all
 * get their answer in the same instant, and each then appends TurnCompleted, whose
 * task.completed message the dispatcher sends.
 */
export async function benchWebhookLatency(options: WebhookLatencyOptions): Promise<WebhookLatencyFigures> {
  const receiver = await startReceiverProcess();
  let gate = newGate();
  const model = await startScriptedOpenAiServer({ defaultReply: (() => gate.opened) as ScriptedReply });
  const dataDir = await makeTmpDir('webhook');
  let service: ChildService | undefined;
  try {
    service = await startChildService({
      port: await freePort(),
      cpuProfDir: options.cpuProfDir,
      env: {
        ...benchServiceEnv(dataDir, 'bench-key', model.url),
        LLM_TIMEOUT_MS: '600000',
        ...benchWebhookEnv(`127.0.0.1:${receiver.port}`),
        ...options.extraEnv,
      },
    });
    const api = new ApiClient(service.url, 'bench-key');
    const pids = { service: service.child.pid!, receiver: receiver.pid };
    const sample = () => ({
      service: schedSample(pids.service),
      bench: schedSample('self'),
      serviceProcess: processSchedSample(pids.service),
      serviceThreads: threadSchedSamples(pids.service),
      benchProcess: processSchedSample('self'),
      receiverProcess: processSchedSample(pids.receiver),
    });

    const round = async (label: string, count: number) => {
      const modelCallsBefore = model.requests.length;
      const ids: string[] = [];
      for (let i = 0; i < count; i++) ids.push(await api.createTask(`${label} ${i}`));
      await waitUntil(`${count} model calls to be held`, () => model.requests.length >= modelCallsBefore + count, STEP_TIMEOUT_MS, 5);
      // Let the creates' own work (and the dispatcher's look at it) settle, so the release is the only thing going on.
      await sleep(300);
      const before = sample();
      const outputAtRelease = childOutputBytes();
      const released = performance.timeOrigin + performance.now();
      const releasedMonotonicUs = process.hrtime.bigint() / 1000n;
      const received = receiver.whenReceived('task.completed', ids, STEP_TIMEOUT_MS);
      const current = gate;
      gate = newGate();
      current.open({ text: 'done' });
      await received;
      const after = sample();
      // The burst's window on the host's monotonic clock, to pick it out of a --cpu-prof profile
      // (cpuprofile-summary.ts --from --to) or a `perf record -k CLOCK_MONOTONIC`.
      // With BENCH_CHILD_OUTPUT, also where the burst lies in the child's output (V8's --trace-opt
      // lines, say), as byte offsets; the child's stdout is buffered, so give or take a few lines.
      options.log(`webhook: ${label} burst, monotonic µs: ${releasedMonotonicUs} ${process.hrtime.bigint() / 1000n}`);
      if (outputAtRelease !== undefined)
        options.log(`webhook: ${label} burst, child output bytes: ${outputAtRelease} ${childOutputBytes()}`);
      await sleep(LINGER_MS);
      const wanted = new Set(ids);
      const arrived = (await receiver.arrivals()).filter((a) => a.type === 'task.completed' && wanted.has(a.taskId));
      const sched = {
        service: schedBetween(before.service, after.service),
        bench: schedBetween(before.bench, after.bench),
        serviceProcess: schedBetween(before.serviceProcess, after.serviceProcess),
        benchProcess: schedBetween(before.benchProcess, after.benchProcess),
        receiverProcess: schedBetween(before.receiverProcess, after.receiverProcess),
        serviceThreads: threadsBetween(pids.service, before.serviceThreads, after.serviceThreads),
      };
      return { ids, released, arrived, sched };
    };

    for (let i = 0; i < (options.warmupRounds ?? 1); i++) {
      options.log(`webhook: warm-up, ${options.warmupTasks} tasks finishing at once`);
      await round('warm-up', options.warmupTasks);
    }
    options.log(`webhook: ${options.tasks} tasks finishing at once`);
    const { ids, released, arrived, sched } = await round('measured', options.tasks);
    const memory = await procMemoryMiB(pids.service);

    const firstById = new Map<string, WebhookArrival>();
    for (const a of arrived) if (!firstById.has(a.webhookId)) firstById.set(a.webhookId, a);
    const once = [...firstById.values()];
    const attempts = await Promise.all(ids.map((id) => firstAttempt(api, id)));
    const attemptAt = new Map(attempts.map((a) => [a.taskId, a]));
    const latencies = once.map((a) => a.receivedAtMs - a.recordedAtMs);
    // BENCH_WEBHOOK_SAMPLES (a file): each run's samples as a JSON line, for percentiles over a
    // series of runs (bench/pooled-percentiles.ts): one run's p99 is its second-slowest message.
    const samplesFile = process.env.BENCH_WEBHOOK_SAMPLES;
    if (samplesFile) appendFileSync(samplesFile, `${JSON.stringify({ at: new Date().toISOString(), latencyMs: latencies })}\n`);
    return {
      tasks: options.tasks,
      warmupTasks: options.warmupTasks,
      latency: summarize(latencies),
      toAttemptStart: summarize(once.map((a) => Date.parse(attemptAt.get(a.taskId)!.at) - a.recordedAtMs)),
      attemptToReceived: summarize(once.map((a) => a.receivedAtMs - Date.parse(attemptAt.get(a.taskId)!.at))),
      finishSpreadMs: Math.max(...once.map((a) => a.recordedAtMs)) - Math.min(...once.map((a) => a.recordedAtMs)),
      releaseToLastMs: Math.max(...once.map((a) => a.receivedAtMs)) - released,
      ...(sched.service ? { serviceThread: sched.service } : {}),
      ...(sched.bench ? { benchThread: sched.bench } : {}),
      ...(sched.serviceProcess ? { serviceProcess: sched.serviceProcess } : {}),
      ...(sched.benchProcess ? { benchProcess: sched.benchProcess } : {}),
      ...(sched.receiverProcess ? { receiverProcess: sched.receiverProcess } : {}),
      serviceThreads: sched.serviceThreads,
      received: once.length,
      duplicates: arrived.length - once.length,
      retried: attempts.filter((a) => a.attempts !== 1).length,
      ...(memory ? { serviceRssMiB: memory.rssMiB, servicePeakMiB: memory.peakMiB } : {}),
    };
  } finally {
    await service?.stop();
    await model.close().catch(() => undefined);
    await receiver.close();
    await removeDir(dataDir);
  }
}

/** How much the child has written to BENCH_CHILD_OUTPUT so far, when set. */
function childOutputBytes(): number | undefined {
  const file = process.env.BENCH_CHILD_OUTPUT;
  return file ? (statSync(file, { throwIfNoEntry: false })?.size ?? 0) : undefined;
}

/** The task.completed delivery's first attempt, from GET /tasks/{id}/webhook-deliveries. */
async function firstAttempt(api: ApiClient, taskId: string): Promise<{ taskId: string; at: string; attempts: number }> {
  const response = await fetch(`${api.baseUrl}/api/v1/tasks/${taskId}/webhook-deliveries`, {
    headers: api.authHeader,
    signal: AbortSignal.timeout(10_000),
  });
  if (!response.ok) throw new Error(`webhook-deliveries of ${taskId}: HTTP ${response.status}`);
  const body = (await response.json()) as { data: { deliveries: { type: string; attempts: { at: string }[] }[] } };
  const delivery = body.data.deliveries.find((d) => d.type === 'task.completed');
  if (!delivery || delivery.attempts.length === 0) throw new Error(`task ${taskId} shows no task.completed attempt`);
  return { taskId, at: delivery.attempts[0].at, attempts: delivery.attempts.length };
}

/** A promise of a model reply that every held request waits on, and its release. */
function newGate(): { opened: Promise<ScriptedReply>; open: (reply: ScriptedReply) => void } {
  let open!: (reply: ScriptedReply) => void;
  const opened = new Promise<ScriptedReply>((resolve) => (open = resolve));
  return { opened, open };
}
