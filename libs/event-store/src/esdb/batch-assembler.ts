import type { StoredEvent } from '../event-store.port';
import type { BatchMark } from './esdb-event-mapping';

/**
 * Regroups the events of a $all subscription into the appends that wrote them. The events of one
 * append are contiguous in $all (ESDB writes an append as one implicit transaction) and each
 * carries its place in the append, so a batch is complete at index `size - 1`.
 */
export class BatchAssembler {
  private pending: StoredEvent[] = [];

  /** True when no batch is half-received: the last event pushed ended a batch. */
  get idle(): boolean {
    return this.pending.length === 0;
  }

  /** Returns the batches completed by this event, oldest first (usually none or one). */
  push(event: StoredEvent, mark: BatchMark): StoredEvent[][] {
    const completed: StoredEvent[][] = [];
    const last = this.pending.at(-1);
    const continues =
      last !== undefined && mark.index === this.pending.length && event.streamId === last.streamId && event.revision === last.revision + 1;
    // A batch that breaks off cannot happen with whole appends; should it, its events still go
    // out (delivery is a hint) rather than being held back forever.
    if (last !== undefined && !continues) completed.push(this.take());
    this.pending.push(event);
    if (mark.index === mark.size - 1) completed.push(this.take());
    return completed;
  }

  /** Forgets a half-received batch, e.g. when the subscription drops; it is read again. */
  reset(): void {
    this.pending = [];
  }

  private take(): StoredEvent[] {
    const batch = this.pending;
    this.pending = [];
    return batch;
  }
}
