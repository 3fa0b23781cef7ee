import { randomBytes } from 'node:crypto';
import { EventStoreDBClient } from '@eventstore/db-client';
import { createEventStoreFromConfig } from '../event-store.config';
import type { AppendResult, EventStore, StoredEvent } from '../event-store.port';
import { describeEventStoreContract } from '../testing/event-store.contract';
import { waitFor } from '../testing/wait-for';
import { createEsdbEventStore } from './esdb-event-store';

// Runs against the server named by ESDB_URL (e.g. esdb://127.0.0.1:2113?tls=false), in the
// `int-esdb` jest project, which scripts/test.sh runs only when ESDB_URL is set (no EventStoreDB
// server can run on our CI machines) and otherwise says it did not run.
const url = process.env.ESDB_URL ?? '';
if (!url) throw new Error('the EventStoreDB suite needs ESDB_URL, e.g. esdb://127.0.0.1:2113?tls=false');

// Every suite and test writes under a stream prefix of its own; test streams stay on the server.
const newPrefix = () => `test-${randomBytes(6).toString('hex')}.`;
const open = (streamPrefix: string) => createEsdbEventStore({ connectionString: url, streamPrefix });

describeEventStoreContract('esdb', async () => {
  const store = await open(newPrefix());
  return { store, cleanup: () => store.close() };
});

describe('esdb event store', () => {
  it('two stores on one server, like two processes, each see all appends through onAppended in global order', async () => {
    const prefix = newPrefix();
    const stores = [await open(prefix), await open(prefix)];
    try {
      const seen: (readonly StoredEvent[])[][] = [[], []];
      stores.forEach((store, i) => store.onAppended((events) => seen[i].push(events)));

      const results = (await Promise.all([0, 1, 2, 3].map((w) => appendBatches(stores[w % 2], `task-${w}`, 10))))
        .flat()
        .sort((a, b) => a.lastGlobalPosition - b.lastGlobalPosition);
      const last = results.at(-1)!.lastGlobalPosition;

      for (const batches of seen) {
        await waitFor(() => batches.at(-1)?.at(-1)?.globalPosition === last, 10_000);
        expect(batches).toEqual(results.map((r) => r.events));
      }
    } finally {
      await Promise.all(stores.map((s) => s.close()));
    }
  }, 30_000);

  it('sees only the streams under its own prefix', async () => {
    const [mine, theirs] = [await open(newPrefix()), await open(newPrefix())];
    try {
      const delivered: StoredEvent[] = [];
      mine.onAppended((events) => delivered.push(...events));
      // Theirs comes first in $all: had it leaked through, it would be delivered first.
      await theirs.appendToStream('task-1', [{ type: 'Noted', data: 'theirs', schemaVersion: 1 }], 'no_stream');
      const written = await mine.appendToStream('task-1', [{ type: 'Noted', data: 'mine', schemaVersion: 1 }], 'no_stream');

      expect(await mine.readStream('task-1')).toEqual(written.events);
      expect(await mine.readAll()).toEqual(written.events);
      expect(await mine.streamRevision('task-1')).toBe(1);
      await waitFor(() => delivered.length > 0);
      expect(delivered).toEqual(written.events);
    } finally {
      await Promise.all([mine.close(), theirs.close()]);
    }
  });

  it('stores data as the JSON body and schemaVersion, batch and metadata in the JSON metadata', async () => {
    const prefix = newPrefix();
    const store = await open(prefix);
    const raw = EventStoreDBClient.connectionString(url);
    try {
      await store.appendToStream(
        'task-1',
        [{ type: 'TaskCreated', data: { title: 'a' }, schemaVersion: 2, metadata: { correlationId: 'c-1' } }],
        'no_stream',
      );

      const events = [];
      for await (const resolved of raw.readStream(`${prefix}task-1`)) events.push(resolved.event);
      expect(events).toMatchObject([
        {
          streamId: `${prefix}task-1`,
          revision: 0n,
          type: 'TaskCreated',
          isJson: true,
          data: { title: 'a' },
          metadata: { schemaVersion: 2, batch: { index: 0, size: 1 }, metadata: { correlationId: 'c-1' } },
        },
      ]);
    } finally {
      await raw.dispose();
      await store.close();
    }
  });

  it('EVENT_STORE=esdb opens a store on ESDB_URL under ESDB_STREAM_PREFIX', async () => {
    const prefix = newPrefix();
    const store = await createEventStoreFromConfig({ EVENT_STORE: 'esdb', ESDB_URL: url, ESDB_STREAM_PREFIX: prefix });
    const raw = EventStoreDBClient.connectionString(url);
    try {
      await store.appendToStream('task-1', [{ type: 'Noted', data: {}, schemaVersion: 1 }], 'no_stream');
      const names = [];
      for await (const resolved of raw.readStream(`${prefix}task-1`)) names.push(resolved.event?.streamId);
      expect(names).toEqual([`${prefix}task-1`]);
    } finally {
      await raw.dispose();
      await store.close();
    }
  });
});

async function appendBatches(store: EventStore, streamId: string, count: number): Promise<AppendResult[]> {
  const results: AppendResult[] = [];
  for (let i = 0; i < count; i++) {
    const events = Array.from({ length: (i % 2) + 1 }, () => ({ type: 'Counted', data: { i }, schemaVersion: 1 }));
    results.push(await store.appendToStream(streamId, events, i === 0 ? 'no_stream' : results.at(-1)!.nextExpectedRevision));
  }
  return results;
}
