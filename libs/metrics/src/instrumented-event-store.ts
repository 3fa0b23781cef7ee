import type { AppendResult, EventStore, ExpectedRevision, NewEvent } from '@app/event-store';
import { ExpectedRevisionConflictError } from '@app/event-store';
import type { ServiceMetrics } from './service-metrics';
import { secondsSince } from './service-metrics';

/**
 * The event store with its appends timed and its optimistic-concurrency conflicts counted; every
 * other call passes straight through. Wraps whichever adapter the configuration chose.
 */
export function instrumentEventStore(store: EventStore, metrics: ServiceMetrics): EventStore {
  const appendToStream = async (streamId: string, events: readonly NewEvent[], expected: ExpectedRevision): Promise<AppendResult> => {
    const startedAt = performance.now();
    try {
      const result = await store.appendToStream(streamId, events, expected);
      metrics.eventStoreAppendDuration.observe({ outcome: 'ok' }, secondsSince(startedAt));
      return result;
    } catch (error) {
      const conflict = error instanceof ExpectedRevisionConflictError;
      if (conflict) metrics.eventStoreConflicts.inc();
      metrics.eventStoreAppendDuration.observe({ outcome: conflict ? 'conflict' : 'error' }, secondsSince(startedAt));
      throw error;
    }
  };
  return {
    appendToStream,
    readStream: (streamId, options) => store.readStream(streamId, options),
    streamRevision: (streamId) => store.streamRevision(streamId),
    readAll: (options) => store.readAll(options),
    onAppended: (listener) => store.onAppended(listener),
    close: () => store.close(),
  };
}
