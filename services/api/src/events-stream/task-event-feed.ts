import { Inject, Injectable, OnModuleDestroy } from '@nestjs/common';
import { EVENT_STORE, EventStore, StoredEvent } from '@app/event-store';

type Listener = (events: readonly StoredEvent[]) => void;

/**
 * One subscription to the event store, fanned out to every open stream by stream id, so a
 * thousand SSE clients cost one store listener and a map lookup per batch.
 */
@Injectable()
export class TaskEventFeed implements OnModuleDestroy {
  private readonly listeners = new Map<string, Set<Listener>>();
  private readonly unsubscribe: () => void;

  constructor(@Inject(EVENT_STORE) store: EventStore) {
    this.unsubscribe = store.onAppended((events) => this.dispatch(events));
  }

  subscribe(streamId: string, listener: Listener): () => void {
    const set = this.listeners.get(streamId) ?? new Set<Listener>();
    set.add(listener);
    this.listeners.set(streamId, set);
    return () => {
      set.delete(listener);
      if (set.size === 0 && this.listeners.get(streamId) === set) this.listeners.delete(streamId);
    };
  }

  /** Open stream listeners, for leak checks. */
  get listenerCount(): number {
    let n = 0;
    for (const set of this.listeners.values()) n += set.size;
    return n;
  }

  onModuleDestroy(): void {
    this.unsubscribe();
  }

  private dispatch(events: readonly StoredEvent[]): void {
    let current: StoredEvent[] = [];
    for (const e of events) {
      if (current.length > 0 && current[0].streamId !== e.streamId) {
        this.deliver(current);
        current = [];
      }
      current.push(e);
    }
    if (current.length > 0) this.deliver(current);
  }

  private deliver(batch: StoredEvent[]): void {
    for (const listener of this.listeners.get(batch[0].streamId) ?? []) listener(batch);
  }
}
