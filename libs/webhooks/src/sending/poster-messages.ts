import type { PostRequest, PostResult } from './http-poster';

/** Between WorkerPoster and its worker (http-poster.worker.ts): numbered POSTs out, their results back, in batches. */
export interface PostOrder {
  readonly n: number;
  readonly request: PostRequest;
}

export interface PostOutcome {
  readonly n: number;
  readonly result: PostResult;
}

/** Requests (or results) per message between the threads, at most. */
export const BATCH_ITEMS = 8;

/**
 * Collects items and hands them over in batches: one as soon as it holds `maxItems`, the rest once
 * the current run's microtasks are done. A dispatcher that starts a hundred attempts in one pass
 * crosses the thread boundary a dozen times, not a hundred; and the first requests leave at once,
 * not behind every microtask queued before the flush (the continuations of a burst's appends).
 */
export class MicrotaskBatcher<T> {
  private items: T[] = [];

  constructor(
    private readonly flush: (items: T[]) => void,
    private readonly maxItems: number,
  ) {}

  add(item: T): void {
    if (this.items.length === 0) queueMicrotask(() => this.flushNow());
    this.items.push(item);
    if (this.items.length >= this.maxItems) this.flushNow();
  }

  private flushNow(): void {
    const items = this.items;
    this.items = [];
    if (items.length > 0) this.flush(items);
  }
}
