import type { RetryPolicy } from './backoff';
import { DEFAULT_STREAM_RETRY, retryDelayMs, sleep } from './backoff';
import { AtsError, errorFromResponse, networkError } from './errors';
import { SseParser } from './sse-parser';
import type { Transport } from './transport';
import type { Task, TaskEvent, TaskStreamEvent } from './types';

export interface StreamOptions {
  /** Start after this event id (0: the whole history); by default the latest turn from its start. */
  readonly after?: number;
  /** Stops the stream: the iterator throws the signal's reason. */
  readonly signal?: AbortSignal;
  /** Reconnects in a row that may fail (no event in between) before the iterator gives up. */
  readonly retry?: Partial<RetryPolicy>;
  /**
   * A connection that carried nothing, not even a keep-alive comment, for this long is taken for
   * dead and replaced. Default 45 s: three of the service's keep-alives (SSE_KEEPALIVE_MS, 15 s).
   */
  readonly idleTimeoutMs?: number;
}

/** Statuses worth reconnecting on; any other error answer (401, 404, 400) ends the stream with it. */
const RETRYABLE_STATUSES = new Set([408, 429, 500, 502, 503, 504]);
const ACTIVE_STATUSES: ReadonlySet<Task['status']> = new Set(['pending', 'running', 'awaiting_approval']);

type ConnectionEnd = { kind: 'done' } | { kind: 'ended' } | { kind: 'failed'; error: unknown };

/**
 * A task's events, each exactly once and in order, until the `done` that ends the turn being
 * followed (the service closes the stream after it). A dropped connection (an error, a premature end, a silent one) is reopened with
 * `Last-Event-ID`, so the service resumes right after the last event yielded. A connection the
 * service ended cleanly without a `done` means the stream had nothing more to follow: the iterator
 * ends if the task is idle and every event up to its lastEventId was yielded, and reconnects
 * otherwise. `retry.retries` failed reconnects in a row end it with STREAM_RETRIES_EXHAUSTED.
 */
export async function* streamTaskEvents(
  transport: Transport,
  taskId: string,
  options: StreamOptions = {},
): AsyncGenerator<TaskStreamEvent> {
  const policy = { ...DEFAULT_STREAM_RETRY, ...options.retry };
  const idleTimeoutMs = options.idleTimeoutMs ?? 45_000;
  let lastId = options.after;
  let failures = 0;
  for (;;) {
    const connection = new StreamConnection(transport, taskId, lastId, idleTimeoutMs, options.signal);
    let yielded = false;
    try {
      for await (const event of connection.events()) {
        if (lastId !== undefined && event.id <= lastId) continue;
        lastId = event.id;
        yielded = true;
        yield event;
      }
    } finally {
      connection.close();
    }
    const end = connection.end!;
    if (end.kind === 'done') return;
    if (end.kind === 'ended' && (await isCaughtUp(transport, taskId, lastId, options.signal))) return;
    failures = yielded ? 1 : failures + 1;
    if (failures > policy.retries) {
      const why = end.kind === 'failed' && end.error instanceof Error ? `: ${end.error.message}` : '';
      throw new AtsError(
        'STREAM_RETRIES_EXHAUSTED',
        `the stream of ${taskId} broke ${failures} times in a row${why}`,
        end.kind === 'failed' && end.error instanceof AtsError ? end.error.status : 0,
        undefined,
        { cause: end.kind === 'failed' ? end.error : undefined },
      );
    }
    await sleep(retryDelayMs(policy, failures), options.signal);
  }
}

/** Whether an idle task has nothing after `lastId`: then a stream that ended cleanly is complete. */
async function isCaughtUp(transport: Transport, taskId: string, lastId: number | undefined, signal?: AbortSignal): Promise<boolean> {
  const response = await transport.send(new Request(transport.url(`/api/v1/tasks/${encodeURIComponent(taskId)}`), { signal }));
  const body = await response.json().catch(() => null);
  if (!response.ok) throw errorFromResponse(response, body);
  const task = (body as { data: Task }).data;
  return !ACTIVE_STATUSES.has(task.status) && (lastId ?? 0) >= task.lastEventId;
}

/** One HTTP connection of the stream; `end` says how it ended once `events()` is exhausted. */
class StreamConnection {
  end?: ConnectionEnd;
  private readonly abort = new AbortController();
  private idleTimer?: ReturnType<typeof setTimeout>;

  constructor(
    private readonly transport: Transport,
    private readonly taskId: string,
    private readonly lastId: number | undefined,
    private readonly idleTimeoutMs: number,
    private readonly signal?: AbortSignal,
  ) {}

  async *events(): AsyncGenerator<TaskStreamEvent> {
    const signal = this.signal ? AbortSignal.any([this.signal, this.abort.signal]) : this.abort.signal;
    const headers: Record<string, string> = { accept: 'text/event-stream' };
    if (this.lastId !== undefined) headers['last-event-id'] = String(this.lastId);
    let response: Response;
    try {
      const url = this.transport.url(`/api/v1/tasks/${encodeURIComponent(this.taskId)}/stream`);
      response = await this.transport.send(new Request(url, { headers, signal }), { retries: 0 });
    } catch (error) {
      if (this.signal?.aborted) throw error;
      this.end = { kind: 'failed', error };
      return;
    }
    if (!response.ok) {
      const error = errorFromResponse(response, await response.json().catch(() => null));
      if (!RETRYABLE_STATUSES.has(response.status)) throw error;
      this.end = { kind: 'failed', error };
      return;
    }
    const parser = new SseParser();
    const decoder = new TextDecoder();
    const reader = response.body!.getReader();
    // The service ends a stream right after the `done` it follows the turn to; a replay of several
    // turns carries earlier `done`s and goes on. So only a clean end right after a `done` is the end.
    let lastWasDone = false;
    try {
      for (;;) {
        this.armIdleTimer();
        const { done, value } = await reader.read();
        if (done) break;
        for (const message of parser.feed(decoder.decode(value, { stream: true }))) {
          const event: TaskStreamEvent = { id: Number(message.id), ...(JSON.parse(message.data) as TaskEvent) };
          lastWasDone = event.type === 'done';
          yield event;
        }
      }
      this.end = { kind: lastWasDone ? 'done' : 'ended' };
    } catch (error) {
      if (this.signal?.aborted) throw error;
      this.end = { kind: 'failed', error: networkError(error) };
    }
  }

  close(): void {
    clearTimeout(this.idleTimer);
    this.abort.abort(new Error('stream connection closed'));
  }

  private armIdleTimer(): void {
    clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(
      () => this.abort.abort(new Error(`nothing received for ${this.idleTimeoutMs} ms (idleTimeoutMs)`)),
      this.idleTimeoutMs,
    );
  }
}
