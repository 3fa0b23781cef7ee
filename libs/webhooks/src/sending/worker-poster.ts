import { extname, join } from 'node:path';
import { Worker } from 'node:worker_threads';
import type { PosterSettings, PostRequest, PostResult } from './http-poster';
import type { PostOrder, PostOutcome } from './poster-messages';
import { BATCH_ITEMS, MicrotaskBatcher } from './poster-messages';

/**
 * The worker's heap bound. It holds only the requests in flight and undici's sockets (answers are
 * read up to 64 KiB and dropped); a runaway is stopped here rather than growing the service.
 */
const WORKER_HEAP_MB = 64;
/** How long close() waits for the worker to close its sockets before it is terminated. */
const CLOSE_GRACE_MS = 2_000;
/** Past the worker's own deadline: a POST the worker never answers for (a stuck worker) fails after this much more. */
const ANSWER_MARGIN_MS = 5_000;

/**
 * HttpPoster in a worker thread, started at the first POST. The service's event loop is busy in a
 * burst (a hundred tasks finishing at once), and undici on it would write each request only after
 * a loop turn and read each answer in one; the worker's loop is free for it. A worker that dies
 * (its heap bound, a crash) fails the POSTs it held, which the dispatcher retries like any failed
 * attempt, and the next POST starts a new one.
 */
export class WorkerPoster {
  private worker?: Worker;
  private readonly waiting = new Map<number, { resolve: (result: PostResult) => void; timer: NodeJS.Timeout }>();
  private readonly orders = new MicrotaskBatcher<PostOrder>((batch) => this.hand(batch), BATCH_ITEMS);
  private next = 0;
  private closed = false;

  constructor(private readonly settings: PosterSettings) {}

  post(request: PostRequest): Promise<PostResult> {
    if (this.closed) return Promise.resolve({ error: 'the webhook sender is closed' });
    const n = ++this.next;
    return new Promise<PostResult>((resolve) => {
      const timer = setTimeout(
        () =>
          this.settle(n, {
            error: `could not deliver: the webhook sender's worker did not answer within ${this.settings.timeoutMs + ANSWER_MARGIN_MS} ms`,
          }),
        this.settings.timeoutMs + ANSWER_MARGIN_MS,
      );
      timer.unref();
      this.waiting.set(n, { resolve, timer });
      // Held open only while it has work: an idle sender keeps no process alive.
      if (this.waiting.size === 1) this.worker?.ref();
      this.orders.add({ n, request });
    });
  }

  /** Lets the worker close its sockets, then ends it; POSTs still held fail. */
  async close(): Promise<void> {
    this.closed = true;
    const worker = this.worker;
    if (!worker) return;
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    worker.postMessage('close');
    const timer = setTimeout(() => void worker.terminate(), CLOSE_GRACE_MS);
    await exited;
    clearTimeout(timer);
  }

  /** To the worker; a batch left over from before close() fails instead of starting a worker nobody would end. */
  private hand(batch: PostOrder[]): void {
    if (this.closed) {
      for (const { n } of batch) this.settle(n, { error: 'the webhook sender is closed' });
      return;
    }
    this.started().postMessage(batch);
  }

  private started(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(workerEntry(), {
      workerData: this.settings,
      resourceLimits: { maxOldGenerationSizeMb: WORKER_HEAP_MB },
      ...tsNodeWhenFromSource(),
    });
    worker.on('message', (results: PostOutcome[]) => {
      for (const { n, result } of results) this.settle(n, result);
    });
    worker.on('error', (error) => this.failAll(`the webhook sender's worker failed: ${error.message}`));
    worker.on('exit', (code) => {
      if (this.worker === worker) this.worker = undefined;
      this.failAll(`the webhook sender's worker stopped (exit code ${code})`);
    });
    this.worker = worker;
    return worker;
  }

  private settle(n: number, result: PostResult): void {
    const waiting = this.waiting.get(n);
    if (!waiting) return;
    this.waiting.delete(n);
    clearTimeout(waiting.timer);
    if (this.waiting.size === 0) this.worker?.unref();
    waiting.resolve(result);
  }

  private failAll(error: string): void {
    for (const n of [...this.waiting.keys()]) this.settle(n, { error: `could not deliver: ${error}` });
  }
}

/** The compiled worker next to this file (dist/), or its TypeScript source when run from source (tests). */
function workerEntry(): string {
  return join(__dirname, `http-poster.worker${extname(__filename)}`);
}

/** Run from source (jest, ts-node), the worker compiles its TypeScript and resolves the @app/* paths itself. */
function tsNodeWhenFromSource(): { execArgv?: string[] } {
  if (extname(__filename) !== '.ts') return {};
  return { execArgv: ['--require', 'ts-node/register/transpile-only', '--require', 'tsconfig-paths/register'] };
}
