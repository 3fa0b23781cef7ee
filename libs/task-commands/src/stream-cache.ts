import type { StoredEvent } from '@app/event-store';

export interface CachedStream<State> {
  readonly state: State;
  readonly events: StoredEvent[];
  readonly revision: number;
}

/**
 * Folded streams kept in memory, least recently used dropped first. `extend` only ever appends
 * events that continue the cached revision exactly; anything else (a gap, an overlap) drops the
 * entry so the next load re-reads the stream from the start.
 */
export class StreamCache<State> {
  private readonly entries = new Map<string, CachedStream<State>>();

  constructor(
    private readonly initial: () => State,
    private readonly maxStreams = 2000,
  ) {}

  get(streamId: string): CachedStream<State> | undefined {
    const entry = this.entries.get(streamId);
    if (entry) {
      this.entries.delete(streamId);
      this.entries.set(streamId, entry);
    }
    return entry;
  }

  extend(
    streamId: string,
    events: readonly StoredEvent[],
    fold: (state: State, events: readonly StoredEvent[]) => State,
  ): CachedStream<State> | undefined {
    const known = this.entries.get(streamId) ?? { state: this.initial(), events: [], revision: 0 };
    if (events.length === 0) return known.revision === 0 ? undefined : known;
    if (events[0].revision !== known.revision + 1) {
      this.entries.delete(streamId);
      return undefined;
    }
    const entry = { state: fold(known.state, events), events: known.events.concat(events), revision: events[events.length - 1].revision };
    this.entries.delete(streamId);
    this.entries.set(streamId, entry);
    if (this.entries.size > this.maxStreams) this.entries.delete(this.entries.keys().next().value as string);
    return entry;
  }
}
