import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { startScriptedOpenAiServer, ScriptedReply } from '@app/model-provider/testing/scripted-openai-server';
import { startWebhookReceiver } from '@app/webhooks/testing/webhook-receiver';
import { freePort } from '../test/support/service-process';
import { ApiClient } from './lib/api-client';
import { ChildService, startChildService } from './lib/child-service';
import { procMemoryMiB } from './lib/proc-memory';
import { SchedSample, schedBetween, schedSample } from './lib/schedstat';
import { summarize, Summary } from './lib/stats';
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
   * Release → the last message received, main threads only (Linux schedstat): the service's
   * (models' answers, completions, dispatcher, sends) and the bench's (model server, receiver):
   * time on a CPU, and time runnable but waiting for one (the machine's other load).
   */
  readonly serviceThread?: SchedSample;
  readonly benchThread?: SchedSample;
  /**
   * The service's main thread from the last TurnCompleted's recorded time to the last message
   * received (sampled at each of the bench's 2 ms polls, so within a poll of either end): the
   * work every delivery of the burst waited behind at most.
   */
  readonly serviceThreadDelivering?: SchedSample;
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
  readonly log: (line: string) => void;
}

interface Arrival {
  readonly webhookId: string;
  readonly taskId: string;
  readonly type: string;
  /** The message's `timestamp`: the recorded time of the event that made it due (ms precision). */
  readonly recordedAtMs: number;
  /** Epoch ms with sub-ms precision (performance.timeOrigin + now), when the body had arrived. */
  readonly receivedAtMs: number;
}

/** Bound on each wait; the whole benchmark is well inside run.ts's watchdog. */
const STEP_TIMEOUT_MS = 60_000;
/** How long to keep listening after the last expected message, to catch repeats. */
const LINGER_MS = 1_000;

/**
 * Benchmark 8: webhooks of many tasks finishing at once. The all-in-one service runs as a child
 * (embedded store) with WEBHOOK_URL pointing at a real HTTP receiver in this process; the scripted
 * model holds every reply until released, so N tasks wait in their model call and all get their
 * answer in the same instant, and each then appends TurnCompleted, whose task.completed message
 * the dispatcher sends.
 */
export async function benchWebhookLatency(options: WebhookLatencyOptions): Promise<WebhookLatencyFigures> {
  const arrivals: Arrival[] = [];
  const receiver = await startWebhookReceiver((request, res) => {
    const receivedAtMs = performance.timeOrigin + performance.now();
    res.writeHead(200).end();
    const body = JSON.parse(request.body) as { type: string; timestamp: string; data: { taskId: string } };
    arrivals.push({
      webhookId: String(request.headers['webhook-id']),
      taskId: body.data.taskId,
      type: body.type,
      recordedAtMs: Date.parse(body.timestamp),
      receivedAtMs,
    });
  });
  let gate = newGate();
  const model = await startScriptedOpenAiServer({ defaultReply: (() => gate.opened) as ScriptedReply });
  const dataDir = await makeTmpDir('webhook');
  let service: ChildService | undefined;
  try {
    service = await startChildService({
      port: await freePort(),
      env: {
        PATH: process.env.PATH ?? '',
        DATA_DIR: dataDir,
        API_KEYS: 'bench-key',
        LLM_BASE_URL: model.url,
        LLM_MODEL: 'bench',
        LLM_STREAM: 'false',
        LLM_TIMEOUT_MS: '600000',
        WEBHOOK_SECRET: `whsec_${randomBytes(32).toString('base64')}`,
        WEBHOOK_URL: `${receiver.origin}/hook`,
        WEBHOOK_ALLOW_HOSTS: `127.0.0.1:${receiver.port}`,
        ...options.extraEnv,
      },
    });
    const api = new ApiClient(service.url, 'bench-key');

    const round = async (label: string, count: number) => {
      const modelCallsBefore = model.requests.length;
      const ids: string[] = [];
      for (let i = 0; i < count; i++) ids.push(await api.createTask(`${label} ${i}`));
      await waitUntil(`${count} model calls to be held`, () => model.requests.length >= modelCallsBefore + count, STEP_TIMEOUT_MS, 5);
      // Let the creates' own work (and the dispatcher's look at it) settle, so the release is the only thing going on.
      await sleep(300);
      const childPid = service!.child.pid!;
      const schedBefore = { service: schedSample(childPid), bench: schedSample('self') };
      const polls: { atMs: number; service: SchedSample | undefined }[] = [];
      const released = performance.timeOrigin + performance.now();
      const current = gate;
      gate = newGate();
      current.open({ text: 'done' });
      const wanted = new Set(ids);
      const completed = () => arrivals.filter((a) => a.type === 'task.completed' && wanted.has(a.taskId));
      await waitUntil(
        `${count} task.completed messages`,
        () => {
          polls.push({ atMs: performance.timeOrigin + performance.now(), service: schedSample(childPid) });
          return new Set(completed().map((a) => a.webhookId)).size >= count;
        },
        STEP_TIMEOUT_MS,
        2,
      );
      const sched = {
        service: schedBetween(schedBefore.service, schedSample(childPid)),
        bench: schedBetween(schedBefore.bench, schedSample('self')),
      };
      await sleep(LINGER_MS);
      return { ids, released, arrived: completed(), sched, polls };
    };

    for (let i = 0; i < (options.warmupRounds ?? 1); i++) {
      options.log(`webhook: warm-up, ${options.warmupTasks} tasks finishing at once`);
      await round('warm-up', options.warmupTasks);
    }
    options.log(`webhook: ${options.tasks} tasks finishing at once`);
    const { ids, released, arrived, sched, polls } = await round('measured', options.tasks);
    const memory = await procMemoryMiB(service!.child.pid!);

    const firstById = new Map<string, Arrival>();
    for (const a of arrived) if (!firstById.has(a.webhookId)) firstById.set(a.webhookId, a);
    const once = [...firstById.values()];
    const attempts = await Promise.all(ids.map((id) => firstAttempt(api, id)));
    const attemptAt = new Map(attempts.map((a) => [a.taskId, a]));
    return {
      tasks: options.tasks,
      warmupTasks: options.warmupTasks,
      latency: summarize(once.map((a) => a.receivedAtMs - a.recordedAtMs)),
      toAttemptStart: summarize(once.map((a) => Date.parse(attemptAt.get(a.taskId)!.at) - a.recordedAtMs)),
      attemptToReceived: summarize(once.map((a) => a.receivedAtMs - Date.parse(attemptAt.get(a.taskId)!.at))),
      finishSpreadMs: Math.max(...once.map((a) => a.recordedAtMs)) - Math.min(...once.map((a) => a.recordedAtMs)),
      releaseToLastMs: Math.max(...once.map((a) => a.receivedAtMs)) - released,
      ...(sched.service ? { serviceThread: sched.service } : {}),
      ...(sched.bench ? { benchThread: sched.bench } : {}),
      ...deliveringWindow(polls, Math.max(...once.map((a) => a.recordedAtMs)), Math.max(...once.map((a) => a.receivedAtMs))),
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

/** The service thread's counters between the polls nearest before `fromMs` and at or after `toMs`. */
function deliveringWindow(
  polls: readonly { atMs: number; service: SchedSample | undefined }[],
  fromMs: number,
  toMs: number,
): { serviceThreadDelivering?: SchedSample } {
  const before = [...polls].reverse().find((p) => p.atMs <= fromMs);
  const after = polls.find((p) => p.atMs >= toMs);
  const window = schedBetween(before?.service, after?.service);
  return window ? { serviceThreadDelivering: window } : {};
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
