import type { ClientRequest, IncomingMessage } from 'node:http';
import { request } from 'node:http';
import { performance } from 'node:perf_hooks';

/**
 * A raw SSE client over node:http that records, for every `id:` line, the performance.now() of
 * the socket chunk it arrived in. No EventSource: no reconnects, no parsing overhead beyond
 * splitting lines, so the timestamps are as close to the wire as the event loop allows.
 */
export class SseRecorder {
  /** Receive time of each id (the first time it was seen). */
  readonly receivedAt = new Map<number, number>();
  /** Ids seen more than once. */
  readonly duplicates: number[] = [];
  /** Ids in arrival order. */
  readonly order: number[] = [];
  /** Body bytes received (UTF-8 characters counted as bytes of their encoding). */
  bytes = 0;
  status = 0;
  ended = false;
  error: Error | undefined;
  /** When the request was sent and when the response headers arrived. */
  sentAt = 0;
  headersAt = 0;
  private req: ClientRequest | undefined;
  private partial = '';
  private readonly waiters = new Set<{ id: number; resolve: () => void }>();

  constructor(
    private readonly url: string,
    private readonly headers: Record<string, string>,
  ) {}

  /** Sends the request and resolves once the response headers are in (status 200 or throws). */
  open(timeoutMs = 10_000): Promise<void> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.close();
        reject(new Error(`SSE ${this.url}: no response headers within ${timeoutMs} ms`));
      }, timeoutMs);
      this.sentAt = performance.now();
      this.req = request(this.url, { headers: { accept: 'text/event-stream', ...this.headers }, agent: false }, (res) => {
        clearTimeout(timer);
        this.headersAt = performance.now();
        this.status = res.statusCode ?? 0;
        if (this.status !== 200) {
          res.resume();
          reject(new Error(`SSE ${this.url}: HTTP ${this.status}`));
          return;
        }
        this.consume(res);
        resolve();
      });
      this.req.on('error', (error) => {
        clearTimeout(timer);
        this.error ??= error;
        this.ended = true;
        this.wakeAll();
        reject(error);
      });
      this.req.end();
    });
  }

  /** Resolves when `id` has been received; rejects after `timeoutMs` or when the stream ends without it. */
  waitFor(id: number, timeoutMs: number): Promise<void> {
    if (this.receivedAt.has(id)) return Promise.resolve();
    if (this.ended) return Promise.reject(new Error(`stream ended before id ${id} (last ${this.lastId()})`));
    return new Promise((resolve, reject) => {
      const waiter = {
        id,
        resolve: () => {
          clearTimeout(timer);
          this.waiters.delete(waiter);
          if (this.receivedAt.has(id)) resolve();
          else reject(new Error(`stream ended before id ${id} (last ${this.lastId()})`));
        },
      };
      const timer = setTimeout(() => {
        this.waiters.delete(waiter);
        reject(new Error(`id ${id} not received within ${timeoutMs} ms (last ${this.lastId()})`));
      }, timeoutMs);
      this.waiters.add(waiter);
    });
  }

  lastId(): number {
    return this.order.length ? this.order[this.order.length - 1] : 0;
  }

  close(): void {
    this.req?.destroy();
    this.ended = true;
    this.wakeAll();
  }

  private consume(res: IncomingMessage): void {
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => {
      const now = performance.now();
      this.bytes += Buffer.byteLength(chunk);
      const text = this.partial + chunk;
      const lastNewline = text.lastIndexOf('\n');
      if (lastNewline < 0) {
        this.partial = text;
        return;
      }
      this.partial = text.slice(lastNewline + 1);
      let start = 0;
      while (start <= lastNewline) {
        const end = text.indexOf('\n', start);
        if (text.startsWith('id:', start)) this.record(Number(text.slice(start + 3, end).trim()), now);
        start = end + 1;
      }
    });
    res.on('end', () => {
      this.ended = true;
      this.wakeAll();
    });
    res.on('error', (error) => {
      this.error ??= error;
      this.ended = true;
      this.wakeAll();
    });
  }

  private record(id: number, now: number): void {
    this.order.push(id);
    if (this.receivedAt.has(id)) this.duplicates.push(id);
    else this.receivedAt.set(id, now);
    for (const waiter of this.waiters) if (waiter.id === id) waiter.resolve();
  }

  private wakeAll(): void {
    for (const waiter of [...this.waiters]) waiter.resolve();
  }
}
