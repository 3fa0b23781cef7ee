import type * as Undici from 'undici';

/** The most bytes of one answer kept whole (a JSON completion, an error page): past it the attempt fails. */
export const MAX_ANSWER_BYTES = 16 * 1024 * 1024;
/** Chunks of a streamed answer read ahead of the reader before the socket is paused. */
const READ_AHEAD_CHUNKS = 64;

/** An answer's status line and headers, as soon as they are in. */
export interface AnswerHead {
  readonly statusCode: number;
  /** A header's value by lower-case name (the first, if it came more than once). */
  header(name: string): string | undefined;
}

/**
 * One model call's side of undici's dispatch protocol: the head as a promise, then the body
 * either whole (`text`) or chunk by chunk (`chunks`, for a server-sent event stream, with the
 * socket paused while the reader is behind). Used instead of undici's `request()`, which builds a
 * body stream, parses every header to strings and arms an abort signal per call: about a third of
 * the event loop's time in a burst of answers (BENCHMARKS.md "Webhooks"), on the loop every
 * task's step shares. `abort` ends the exchange at any point (the caller's signal, the attempt's
 * deadline, a body left unread), whether or not undici has started it on a socket yet.
 */
export class ModelExchange implements Undici.Dispatcher.DispatchHandlers {
  readonly head: Promise<AnswerHead>;
  private resolveHead!: (head: AnswerHead) => void;
  private rejectHead!: (error: Error) => void;
  private abortExchange?: (reason: Error) => void;
  private resumeSocket?: () => void;
  private readonly received: Buffer[] = [];
  private receivedBytes = 0;
  /** Read chunk by chunk: the socket may then be paused while the reader is behind. */
  private streaming = false;
  /** onData asked undici to stop reading the socket. */
  private paused = false;
  private complete = false;
  private failure?: Error;
  /** The reader waiting for the next chunk, the end or a failure. */
  private wake?: () => void;

  constructor() {
    this.head = new Promise<AnswerHead>((resolve, reject) => {
      this.resolveHead = resolve;
      this.rejectHead = reject;
    });
    // Awaited by the caller; a failure before it looks must not count as unhandled.
    this.head.catch(() => undefined);
  }

  /** The answer was read whole, or the exchange failed: nothing is left to abort. */
  get ended(): boolean {
    return this.complete || this.failure !== undefined;
  }

  /** Ends the exchange: whatever waits for the head or the body fails with `reason`. */
  abort(reason: Error): void {
    if (this.ended) return;
    this.fail(reason);
    this.abortExchange?.(reason);
  }

  /** The whole body as text, once complete; at most MAX_ANSWER_BYTES. */
  async text(): Promise<string> {
    while (!this.complete) {
      if (this.failure) throw this.failure;
      await new Promise<void>((resolve) => (this.wake = resolve));
    }
    if (this.failure) throw this.failure;
    return this.received.length === 1 ? this.received[0].toString('utf8') : Buffer.concat(this.received).toString('utf8');
  }

  /** The body's chunks as they arrive. */
  async *chunks(): AsyncGenerator<Buffer> {
    this.streaming = true;
    for (;;) {
      if (this.failure) throw this.failure;
      if (this.received.length > 0) {
        const chunk = this.received.shift()!;
        this.receivedBytes -= chunk.length;
        this.resumeIfDrained();
        yield chunk;
      } else if (this.complete) {
        return;
      } else {
        await new Promise<void>((resolve) => (this.wake = resolve));
      }
    }
  }

  onConnect(abort: (reason: Error) => void): void {
    this.abortExchange = abort;
    // Aborted while undici still had it queued: nothing is sent.
    if (this.failure) abort(this.failure);
  }

  onHeaders(statusCode: number, headers: Buffer[], resume: () => void): boolean {
    if (statusCode < 200) return true; // 1xx answers are interim
    this.resumeSocket = resume;
    this.resolveHead({ statusCode, header: (name) => headerValue(headers, name) });
    return true;
  }

  onData(chunk: Buffer): boolean {
    this.received.push(chunk);
    this.receivedBytes += chunk.length;
    this.notify();
    if (this.receivedBytes > MAX_ANSWER_BYTES) {
      this.abort(new AnswerTooLargeError());
      return false;
    }
    this.paused = this.streaming && this.received.length >= READ_AHEAD_CHUNKS;
    return !this.paused;
  }

  onComplete(): void {
    this.complete = true;
    this.notify();
  }

  onError(error: Error): void {
    this.fail(error);
  }

  private fail(error: Error): void {
    if (this.failure || this.complete) return;
    this.failure = error;
    this.rejectHead(error);
    this.notify();
  }

  private notify(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }

  private resumeIfDrained(): void {
    // Called from the reader, never from inside undici's parser (onData), which forbids it.
    if (this.paused && this.received.length <= READ_AHEAD_CHUNKS / 2) {
      this.paused = false;
      this.resumeSocket?.();
    }
  }
}

/** The answer is larger than MAX_ANSWER_BYTES: no chat completion is, so it is not read on. */
export class AnswerTooLargeError extends Error {
  constructor() {
    super(`the answer is larger than ${MAX_ANSWER_BYTES / 1024 / 1024} MiB, more than any chat completion; not read on`);
    this.name = 'AnswerTooLargeError';
  }
}

/** Raw headers come as [name, value, name, value…] buffers; only the few asked for are decoded. */
function headerValue(headers: Buffer[], name: string): string | undefined {
  for (let i = 0; i + 1 < headers.length; i += 2) {
    const key = headers[i];
    if (key.length === name.length && key.toString('latin1').toLowerCase() === name) return headers[i + 1].toString('latin1');
  }
  return undefined;
}
