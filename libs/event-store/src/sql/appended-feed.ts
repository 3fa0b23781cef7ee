import type { StoredEvent, Unsubscribe } from '../event-store.port';

type Listener = (events: readonly StoredEvent[]) => void;

const RETRY_READ_MS = 500;

/**
 * Hands committed batches to listeners once each and in global order. This process's appends
 * offer their batch directly; other processes only announce how far the store has grown, and
 * the missing batches are read back. Positions have no gaps (see event-store.schema.ts), so the
 * next position to deliver is always `delivered + 1`, whichever append finishes first.
 */
export class AppendedFeed {
  private readonly listeners = new Set<Listener>();
  private readonly offered = new Map<number, readonly StoredEvent[]>();
  private delivered: number;
  private target: number;
  private pumping = false;
  private stopped = false;
  private retry?: NodeJS.Timeout;

  constructor(
    startAfter: number,
    private readonly readBatches: (after: number, upTo: number) => Promise<StoredEvent[][]>,
    private readonly reportError: (error: unknown) => void,
  ) {
    this.delivered = this.target = startAfter;
  }

  subscribe(listener: Listener): Unsubscribe {
    const entry = (events: readonly StoredEvent[]) => listener(events);
    this.listeners.add(entry);
    return () => void this.listeners.delete(entry);
  }

  /** A batch this process has committed. */
  offer(batch: readonly StoredEvent[]): void {
    if (batch[0].globalPosition <= this.delivered) return;
    this.offered.set(batch[0].globalPosition, batch);
    this.announce(batch[batch.length - 1].globalPosition);
  }

  /** Every position up to `position` is committed, by this process or another. */
  announce(position: number): void {
    if (this.stopped) return;
    this.target = Math.max(this.target, position);
    void this.pump();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.retry);
    this.listeners.clear();
    this.offered.clear();
  }

  private async pump(): Promise<void> {
    if (this.pumping) return;
    this.pumping = true;
    try {
      while (!this.stopped && this.delivered < this.target) {
        const next = this.offered.get(this.delivered + 1);
        if (this.listeners.size === 0) this.skipTo(this.target);
        else if (next) this.emit(next);
        else await this.readGap();
      }
    } catch (error) {
      if (this.stopped) return;
      this.reportError(error);
      this.retry = setTimeout(() => void this.pump(), RETRY_READ_MS).unref();
    } finally {
      this.pumping = false;
    }
  }

  private async readGap(): Promise<void> {
    const batches = await this.readBatches(this.delivered, this.target);
    if (batches.length === 0) throw new Error(`positions ${this.delivered + 1}..${this.target} are announced but not readable`);
    for (const batch of batches) if (!this.stopped) this.emit(batch);
  }

  private emit(batch: readonly StoredEvent[]): void {
    this.skipTo(batch[batch.length - 1].globalPosition);
    for (const listener of [...this.listeners]) {
      if (!this.listeners.has(listener)) continue;
      try {
        listener(batch);
      } catch (error) {
        // One failing listener must not stop the others or the store.
        this.reportError(error);
      }
    }
  }

  private skipTo(position: number): void {
    this.delivered = position;
    for (const first of this.offered.keys()) if (first <= position) this.offered.delete(first);
  }
}
