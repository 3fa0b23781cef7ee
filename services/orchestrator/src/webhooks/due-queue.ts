/** One message's place in the queue: its id and the time it is due. */
export interface DueEntry {
  readonly id: string;
  readonly dueAt: number;
}

/**
 * A binary min-heap of message ids by due time: the dispatcher finds what is due, and when the
 * next message will be, without walking every pending message after every attempt (with a
 * receiver down and thousands of messages waiting to be retried, that walk made each round of
 * retries quadratic). Entries are never updated in place: a message re-timed gets a new entry,
 * and the caller drops the stale ones as they come to the top.
 */
export class DueQueue {
  private readonly heap: DueEntry[] = [];

  get size(): number {
    return this.heap.length;
  }

  push(id: string, dueAt: number): void {
    const heap = this.heap;
    heap.push({ id, dueAt });
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (heap[parent].dueAt <= heap[i].dueAt) break;
      [heap[parent], heap[i]] = [heap[i], heap[parent]];
      i = parent;
    }
  }

  /** The earliest entry, left in place. */
  peek(): DueEntry | undefined {
    return this.heap[0];
  }

  /** Removes and returns the earliest entry. */
  pop(): DueEntry | undefined {
    const heap = this.heap;
    const top = heap[0];
    const last = heap.pop();
    if (heap.length === 0 || last === undefined) return top;
    heap[0] = last;
    let i = 0;
    for (;;) {
      const left = 2 * i + 1;
      const right = left + 1;
      let least = i;
      if (left < heap.length && heap[left].dueAt < heap[least].dueAt) least = left;
      if (right < heap.length && heap[right].dueAt < heap[least].dueAt) least = right;
      if (least === i) return top;
      [heap[least], heap[i]] = [heap[i], heap[least]];
      i = least;
    }
  }
}
