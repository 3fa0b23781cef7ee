import type { ClientRequest, IncomingMessage } from 'node:http';
import { Agent, request } from 'node:http';
import { performance } from 'node:perf_hooks';
import { SUBJECTS } from '@app/contracts';
import type { MessageBus } from '@app/bus';
import { MESSAGE_BUS } from '@app/bus';
import type { EventStore } from '@app/event-store';
import { taskStreamId } from '@app/common';
import { toTaskEvent } from '@app/task-domain';
import type { InProcessService } from './lib/in-process-service';
import type { Summary } from './lib/stats';
import { summarize } from './lib/stats';
import { sleep, waitUntil } from './lib/timing';

export interface ApproveLatencyFigures {
  readonly warmupRuns: number;
  readonly runs: number;
  /** The tool the model asks for (cheap, so the figure is the service's path, not the tool). */
  readonly tool: string;
  /** POST approve sent → the `tool_result` of that call received on the task's SSE stream. */
  readonly latency: Summary;
  /** Diagnostic: POST approve sent → its 200 response received. */
  readonly postResponse: Summary;
  /** Diagnostics: the path split at the store's onAppended dispatch of each event of the call. */
  readonly toDecisionDispatched: Summary;
  /** ToolCallDecided dispatched → ToolCallStarted dispatched (runner wake-up, step, StartToolCall append). */
  readonly decisionToStarted: Summary;
  /** ToolCallStarted dispatched → the tool's bus request sent. */
  readonly startedToToolRequest: Summary;
  /** The sandbox's bus request (session ready, task load, tool, downloads/ scan), timed around `bus.request`. */
  readonly toolRequest: Summary;
  /** The bus request answered → ToolCallFinished dispatched (FinishToolCall append). */
  readonly toolReplyToFinished: Summary;
  /**
   * POST sent → ToolCallFinished dispatched. The SSE session writes the frame to its socket
   * synchronously inside that dispatch (the service's feed listens before ours), so this is when
   * the service has sent the tool_result; the rest is the in-process client getting to read it.
   */
  readonly toServerWrite: Summary;
  /** ToolCallFinished dispatched → `tool_result` received by the SSE client. */
  readonly finishedToSse: Summary;
  /** Every `appendToStream` call started between POST sent and tool_result received. */
  readonly appendCall: Summary;
  /** Per run: appends and stream reads (this task) started in that window. */
  readonly appendsPerRun: number;
  readonly readsPerRun: number;
  /** Measured runs that did not get their tool_result (or failed otherwise), and the first few reasons. */
  readonly failures: number;
  readonly failureReasons: string[];
  readonly totalMs: number;
}

export interface ApproveLatencyOptions {
  readonly runs: number;
  readonly warmupRuns?: number;
  readonly log: (line: string) => void;
}

const TOOL = 'list_files';
/** Bound on each wait of one run. */
const STEP_TIMEOUT_MS = 10_000;
/** The whole benchmark; well inside run.ts's watchdog. */
const TOTAL_TIMEOUT_MS = 180_000;
/** Stop early rather than pile up failures when something is plainly broken. */
const MAX_CONSECUTIVE_FAILURES = 5;

interface RunTimes {
  t0: number;
  t1?: number;
  postDone?: number;
  decided?: number;
  started?: number;
  finished?: number;
  toolRequestStart?: number;
  toolRequestEnd?: number;
  /** Store calls on this task's stream: [start, duration]; only those started in [t0, t1] count. */
  appendCalls: [number, number][];
  reads: number[];
}

/**
 * Benchmark 6: a tool call waiting for approval; time from sending `POST …/approve` to the
 * call's `tool_result` arriving on an SSE client. Each run is one new task with
 * `autoExecute: false` whose model asks for one `list_files` call and then answers with text.
 */
export async function benchApproveLatency(service: InProcessService, options: ApproveLatencyOptions): Promise<ApproveLatencyFigures> {
  const warmupRuns = options.warmupRuns ?? 5;
  const agent = new Agent({ keepAlive: true, maxSockets: 4 });
  const http = new JsonHttp(service.url, service.api.authHeader, agent);
  const store = service.store;
  const bus = service.app.get<MessageBus>(MESSAGE_BUS);

  // Instrumentation, for the duration of this benchmark only: the store's dispatch of each event,
  // and timings around the store's append/read and the bus's tool request (restored in finally).
  let current: { streamId: string; callId: string; times: RunTimes } | undefined;
  const stopObserving = store.onAppended((events) => {
    const now = performance.now();
    if (!current) return;
    for (const stored of events) {
      if (stored.streamId !== current.streamId) continue;
      const e = toTaskEvent(stored);
      if (!('callId' in e.data) || e.data.callId !== current.callId) continue;
      if (e.type === 'ToolCallDecided') current.times.decided ??= now;
      else if (e.type === 'ToolCallStarted') current.times.started ??= now;
      else if (e.type === 'ToolCallFinished') current.times.finished ??= now;
    }
  });
  const restore = instrument(store, bus, {
    onAppend: (streamId, started, ms) => {
      const run = current;
      if (run && streamId === run.streamId) run.times.appendCalls.push([started, ms]);
    },
    onRead: (streamId, started) => {
      const run = current;
      if (run && streamId === run.streamId) run.times.reads.push(started);
    },
    onToolRequest: (callId, start, end) => {
      if (current && callId === current.callId) {
        current.times.toolRequestStart = start;
        current.times.toolRequestEnd = end;
      }
    },
  });

  const measured: RunTimes[] = [];
  const failureReasons: string[] = [];
  let failures = 0;
  let consecutiveFailures = 0;
  const begin = performance.now();
  const deadline = Date.now() + TOTAL_TIMEOUT_MS;
  try {
    options.log(`approve: ${warmupRuns} warm-up + ${options.runs} measured runs (${TOOL}, autoExecute false)`);
    for (let i = 0; i < warmupRuns + options.runs; i++) {
      if (Date.now() > deadline)
        throw new Error(`the approval runs took over ${TOTAL_TIMEOUT_MS / 1000} s (${i} of ${warmupRuns + options.runs} done)`);
      const isWarmup = i < warmupRuns;
      try {
        const times = await oneRun(service, http, (streamId, callId, times) => (current = { streamId, callId, times }));
        if (!isWarmup) measured.push(times);
        consecutiveFailures = 0;
      } catch (error) {
        const reason = error instanceof Error ? error.message : String(error);
        options.log(`approve: run ${i + 1}${isWarmup ? ' (warm-up)' : ''} failed: ${reason}`);
        if (!isWarmup) {
          failures++;
          if (failureReasons.length < 5) failureReasons.push(reason);
        }
        if (++consecutiveFailures >= MAX_CONSECUTIVE_FAILURES)
          throw new Error(`${consecutiveFailures} runs in a row failed; last: ${reason}`, { cause: error });
      } finally {
        current = undefined;
      }
      if (!isWarmup && (i - warmupRuns + 1) % 25 === 0) options.log(`approve: ${i - warmupRuns + 1} of ${options.runs} runs done`);
    }
  } finally {
    stopObserving();
    restore();
    agent.destroy();
  }

  const inWindow = (t: RunTimes, at: number) => at >= t.t0 && t.t1 !== undefined && at <= t.t1;
  const appends = measured.map((t) => t.appendCalls.filter(([at]) => inWindow(t, at)).map(([, ms]) => ms));
  const reads = measured.map((t) => t.reads.filter((at) => inWindow(t, at)).length);
  const span = (from: (t: RunTimes) => number | undefined, to: (t: RunTimes) => number | undefined) =>
    summarize(measured.flatMap((t) => (from(t) !== undefined && to(t) !== undefined ? [to(t)! - from(t)!] : [])));
  return {
    warmupRuns,
    runs: options.runs,
    tool: TOOL,
    latency: span(
      (t) => t.t0,
      (t) => t.t1,
    ),
    postResponse: span(
      (t) => t.t0,
      (t) => t.postDone,
    ),
    toDecisionDispatched: span(
      (t) => t.t0,
      (t) => t.decided,
    ),
    decisionToStarted: span(
      (t) => t.decided,
      (t) => t.started,
    ),
    startedToToolRequest: span(
      (t) => t.started,
      (t) => t.toolRequestStart,
    ),
    toolRequest: span(
      (t) => t.toolRequestStart,
      (t) => t.toolRequestEnd,
    ),
    toolReplyToFinished: span(
      (t) => t.toolRequestEnd,
      (t) => t.finished,
    ),
    toServerWrite: span(
      (t) => t.t0,
      (t) => t.finished,
    ),
    finishedToSse: span(
      (t) => t.finished,
      (t) => t.t1,
    ),
    appendCall: summarize(appends.flat()),
    appendsPerRun: measured.length ? appends.reduce((n, a) => n + a.length, 0) / measured.length : Number.NaN,
    readsPerRun: measured.length ? reads.reduce((n, r) => n + r, 0) / measured.length : Number.NaN,
    failures,
    failureReasons,
    totalMs: performance.now() - begin,
  };
}

/** One task: create, wait for the approval request, stream, approve, time the tool_result, wait for the turn's end. */
async function oneRun(
  service: InProcessService,
  http: JsonHttp,
  track: (streamId: string, callId: string, times: RunTimes) => void,
): Promise<RunTimes> {
  const requestsBefore = service.model.requests.length;
  service.model.script({ toolCalls: [{ name: TOOL, arguments: {} }] }, { text: 'listed' });
  const created = await http.call<{ id: string }>('POST', '/api/v1/tasks', { message: 'list the files', autoExecute: false });
  const taskId = created.id;
  let client: SseClient | undefined;
  let settled = false;
  try {
    let task: TaskBody | undefined;
    await waitUntil(
      'the tool call to await approval',
      async () => {
        task = await http.call<TaskBody>('GET', `/api/v1/tasks/${taskId}`);
        if (task.status === 'failed' || task.status === 'completed')
          throw new Error(`task ended ${task.status} before asking for approval: ${task.error ?? ''}`);
        return task.pendingApprovals.length > 0;
      },
      STEP_TIMEOUT_MS,
      2,
    );
    if (task!.pendingApprovals.length !== 1 || task!.pendingApprovals[0].toolName !== TOOL) {
      throw new Error(`expected one pending ${TOOL} approval, got ${JSON.stringify(task!.pendingApprovals)}`);
    }
    const callId = task!.pendingApprovals[0].callId;

    client = new SseClient(`${service.url}/api/v1/tasks/${taskId}/stream?after=${task!.lastEventId}`, service.api.authHeader);
    await client.open(STEP_TIMEOUT_MS);
    // Let the session finish its (empty) catch-up read so it is live before the clock starts.
    await sleep(2);

    const times: RunTimes = { t0: 0, appendCalls: [], reads: [] };
    track(taskStreamId(taskId), callId, times);
    const toolResult = client.waitFor((e) => e.kind === 'tool_result' && e.data.callId === callId, STEP_TIMEOUT_MS);
    times.t0 = performance.now();
    const post = http
      .call<{ approved: boolean }>('POST', `/api/v1/tasks/${taskId}/tools/${callId}/approve`, { outcome: 'proceed_once' })
      .then((body) => {
        times.postDone = performance.now();
        return body;
      });
    const [result, approved] = await Promise.all([toolResult, post]);
    times.t1 = result.at;
    if (!approved.approved) throw new Error('the approve POST answered approved: false');
    if (result.data.status !== 'success')
      throw new Error(`the tool_result is ${String(result.data.status)}: ${String(result.data.output).slice(0, 200)}`);

    const done = await client.waitFor((e) => e.kind === 'done', STEP_TIMEOUT_MS);
    if (done.data.status !== 'completed') throw new Error(`the turn ended ${String(done.data.status)}: ${String(done.data.error ?? '')}`);
    if (service.model.requests.length !== requestsBefore + 2) {
      throw new Error(`expected 2 model calls for the task, saw ${service.model.requests.length - requestsBefore}`);
    }
    settled = true;
    return times;
  } finally {
    client?.close();
    // A failed run must not leave a turn running (it would take later runs' scripted replies).
    if (!settled) await http.call('POST', `/api/v1/tasks/${taskId}/cancel`, {}).catch(() => undefined);
  }
}

interface TaskBody {
  readonly status: string;
  readonly lastEventId: number;
  readonly error?: string;
  readonly pendingApprovals: { callId: string; toolName: string }[];
}

interface Hooks {
  onAppend(streamId: string, startedAt: number, ms: number): void;
  onRead(streamId: string, startedAt: number): void;
  onToolRequest(callId: string, start: number, end: number): void;
}

/** Wraps the store's append/read and the bus's request on these instances; returns the undo. */
function instrument(store: EventStore, bus: MessageBus, hooks: Hooks): () => void {
  const s = store as unknown as Record<string, unknown>;
  const b = bus as unknown as Record<string, unknown>;
  const own = { append: Object.hasOwn(s, 'appendToStream'), read: Object.hasOwn(s, 'readStream'), request: Object.hasOwn(b, 'request') };
  const append = store.appendToStream;
  const read = store.readStream;
  const req = bus.request;
  store.appendToStream = async function (this: EventStore, streamId, events, expected) {
    const started = performance.now();
    try {
      return await append.call(this, streamId, events, expected);
    } finally {
      hooks.onAppend(streamId, started, performance.now() - started);
    }
  };
  store.readStream = function (this: EventStore, streamId, opts) {
    hooks.onRead(streamId, performance.now());
    return read.call(this, streamId, opts);
  };
  bus.request = async function <Req, Res>(this: MessageBus, subject: string, payload: Req, opts?: { timeoutMs?: number }): Promise<Res> {
    if (subject !== SUBJECTS.sandboxExecuteTool) return req.call(this, subject, payload, opts) as Promise<Res>;
    const start = performance.now();
    try {
      return (await req.call(this, subject, payload, opts)) as Res;
    } finally {
      hooks.onToolRequest((payload as { callId?: string }).callId ?? '', start, performance.now());
    }
  };
  return () => {
    if (own.append) store.appendToStream = append;
    else delete s.appendToStream;
    if (own.read) store.readStream = read;
    else delete s.readStream;
    if (own.request) bus.request = req;
    else delete b.request;
  };
}

/** Small JSON client over node:http keep-alive sockets, every call bounded. */
class JsonHttp {
  constructor(
    private readonly baseUrl: string,
    private readonly auth: Record<string, string>,
    private readonly agent: Agent,
  ) {}

  call<T>(method: string, path: string, json?: unknown): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const body = json === undefined ? undefined : JSON.stringify(json);
      const req = request(
        `${this.baseUrl}${path}`,
        {
          method,
          agent: this.agent,
          headers: {
            ...this.auth,
            ...(body === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }),
          },
          timeout: STEP_TIMEOUT_MS,
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('error', reject);
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            if ((res.statusCode ?? 0) >= 300) return reject(new Error(`${method} ${path}: HTTP ${res.statusCode} ${text.slice(0, 300)}`));
            try {
              resolve((JSON.parse(text) as { data: T }).data);
            } catch (error) {
              reject(error);
            }
          });
        },
      );
      req.on('timeout', () => req.destroy(new Error(`${method} ${path}: no answer within ${STEP_TIMEOUT_MS} ms`)));
      req.on('error', reject);
      req.end(body);
    });
  }
}

interface SseEvent {
  readonly id: number;
  readonly kind: string;
  readonly data: Record<string, unknown>;
  /** performance.now() of the socket chunk that completed the event. */
  readonly at: number;
}

/** A raw SSE client that parses whole events (`event:`, `data:`, `id:`) and timestamps each. */
class SseClient {
  readonly events: SseEvent[] = [];
  private req: ClientRequest | undefined;
  private partial = '';
  private ended = false;
  private readonly waiters = new Set<() => void>();

  constructor(
    private readonly url: string,
    private readonly headers: Record<string, string>,
  ) {}

  open(timeoutMs: number): Promise<void> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.close();
        reject(new Error(`SSE ${this.url}: no response headers within ${timeoutMs} ms`));
      }, timeoutMs);
      this.req = request(this.url, { headers: { accept: 'text/event-stream', ...this.headers }, agent: false }, (res) => {
        clearTimeout(timer);
        if (res.statusCode !== 200) {
          res.resume();
          reject(new Error(`SSE ${this.url}: HTTP ${res.statusCode}`));
          return;
        }
        this.consume(res);
        resolve();
      });
      this.req.on('error', (error) => {
        clearTimeout(timer);
        this.finish();
        reject(error);
      });
      this.req.end();
    });
  }

  /** The first event (already received or still to come) matching `match`; rejects after `timeoutMs` or at the stream's end. */
  waitFor(match: (e: SseEvent) => boolean, timeoutMs: number): Promise<SseEvent> {
    const found = this.events.find(match);
    if (found) return Promise.resolve(found);
    return new Promise((resolve, reject) => {
      const check = () => {
        const event = this.events.find(match);
        if (event) settle(() => resolve(event));
        else if (this.ended) settle(() => reject(new Error(`stream ended without the event (got: ${this.kinds()})`)));
      };
      const settle = (fn: () => void) => {
        clearTimeout(timer);
        this.waiters.delete(check);
        fn();
      };
      const timer = setTimeout(
        () => settle(() => reject(new Error(`event not received within ${timeoutMs} ms (got: ${this.kinds()})`))),
        timeoutMs,
      );
      this.waiters.add(check);
    });
  }

  close(): void {
    this.req?.destroy();
    this.finish();
  }

  private kinds(): string {
    return this.events.map((e) => `${e.id}:${e.kind}`).join(', ') || 'nothing';
  }

  private consume(res: IncomingMessage): void {
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => {
      const now = performance.now();
      const text = this.partial + chunk;
      const blocks = text.split('\n\n');
      this.partial = blocks.pop() ?? '';
      let added = false;
      for (const block of blocks) {
        let kind = '';
        let data = '';
        let id = 0;
        for (const line of block.split('\n')) {
          if (line.startsWith('event:')) kind = line.slice(6).trim();
          else if (line.startsWith('data:')) data += line.slice(5).trim();
          else if (line.startsWith('id:')) id = Number(line.slice(3).trim());
        }
        if (!kind) continue; // a comment (stream open, keep-alive)
        const parsed = JSON.parse(data) as { data: Record<string, unknown> };
        this.events.push({ id, kind, data: parsed.data, at: now });
        added = true;
      }
      if (added) this.wake();
    });
    res.on('end', () => this.finish());
    res.on('error', () => this.finish());
  }

  private finish(): void {
    this.ended = true;
    this.wake();
  }

  private wake(): void {
    for (const check of [...this.waiters]) check();
  }
}
