import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import type { PromData, PromHistogramData } from 'prom2javascript';
import { getMetricsFromStream } from 'prom2javascript';
import { ExpectedRevisionConflictError, createEventStoreFromConfig } from '@app/event-store';
import { describeEventStoreContract } from '@app/event-store/testing/event-store.contract';
import { instrumentEventStore } from './instrumented-event-store';
import { ServiceMetrics } from './service-metrics';

const embedded = async (metrics = new ServiceMetrics()) => {
  const dataDir = await mkdtemp(join(tmpdir(), 'instrumented-store-'));
  const store = instrumentEventStore(await createEventStoreFromConfig({ DATA_DIR: dataDir }), metrics);
  return {
    store,
    cleanup: async () => {
      await store.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
};

// The decorator changes nothing a caller can see: the port's whole contract still holds through it.
describeEventStoreContract('instrumented embedded store', () => embedded());

describe('instrumentEventStore', () => {
  it('times appends by outcome and counts conflicts', async () => {
    const metrics = new ServiceMetrics();
    const { store, cleanup } = await embedded(metrics);
    try {
      const event = { type: 'Noted', data: {}, schemaVersion: 1 };
      await store.appendToStream('s-1', [event], 'no_stream');
      await store.appendToStream('s-1', [event], 1);
      await expect(store.appendToStream('s-1', [event], 1)).rejects.toBeInstanceOf(ExpectedRevisionConflictError);
      const families = await getMetricsFromStream(Readable.from([(await metrics.exposition()).body]));
      const appends = (families.ats_event_store_append_duration_seconds.data as PromHistogramData[]).map((d) => [
        d.labels.outcome,
        d.count,
      ]);
      expect(appends).toEqual([
        ['ok', 2],
        ['conflict', 1],
      ]);
      expect((families.ats_event_store_conflicts_total.data as PromData[])[0].value).toBe(1);
    } finally {
      await cleanup();
    }
  });
});
