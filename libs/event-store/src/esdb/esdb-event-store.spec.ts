import type { AppendResult, EventStore, StoredEvent } from '../event-store.port';
import { describeEventStoreContract } from '../testing/event-store.contract';
import { FakeEsdbClient, asEsdbClient } from '../testing/fake-esdb-client';
import { waitFor } from '../testing/wait-for';
import { openEsdbEventStore } from './esdb-event-store';

// The adapter's own logic (revisions, positions, read-back, $all filtering, batching, resubscribe)
// against an in-memory fake of the client. Whether a real server behaves like the fake is what
// esdb-event-store.server-spec.ts checks, with ESDB_URL set.

describeEventStoreContract('esdb adapter over a fake client', async () => {
  const store = await openEsdbEventStore(asEsdbClient(new FakeEsdbClient()), { streamPrefix: 'test.' });
  return { store, cleanup: () => store.close() };
});

describe('esdb event store over a fake client', () => {
  let fake: FakeEsdbClient;
  let store: EventStore;
  let errors: unknown[];

  beforeEach(async () => {
    fake = new FakeEsdbClient();
    errors = [];
    store = await openEsdbEventStore(asEsdbClient(fake), { streamPrefix: 'agentic.', reportError: (e) => errors.push(e) });
  });
  afterEach(() => store.close());

  it('reads and delivers only our streams out of $all, not system or other prefixes', async () => {
    const delivered: StoredEvent[] = [];
    store.onAppended((events) => delivered.push(...events));
    fake.writeForeign('$stats-127.0.0.1:2113', 2);
    const first = await store.appendToStream('task-1', [{ type: 'A', data: {}, schemaVersion: 1 }], 'no_stream');
    fake.writeForeign('other.task-1');
    fake.writeForeign('agentic'); // shares the prefix's letters, not the prefix
    const second = await store.appendToStream('task-2', [{ type: 'B', data: {}, schemaVersion: 1 }], 'no_stream');

    expect(await store.readAll()).toEqual([...first.events, ...second.events]);
    expect(await store.readAll({ after: first.lastGlobalPosition })).toEqual(second.events);
    await waitFor(() => delivered.length === 2);
    expect(delivered).toEqual([...first.events, ...second.events]);
  });

  it('keeps delivering across dropped subscriptions, every append once and whole', async () => {
    const batches: (readonly StoredEvent[])[] = [];
    store.onAppended((events) => batches.push(events));
    const results: AppendResult[] = [];
    for (let i = 0; i < 6; i++) {
      results.push(
        await store.appendToStream(
          `task-${i % 2}`,
          [1, 2, 3].map((n) => ({ type: 'N', data: { n }, schemaVersion: 1 })),
          'any',
        ),
      );
      if (i % 2 === 0) fake.dropSubscriptions();
    }

    await waitFor(() => batches.at(-1)?.at(-1)?.globalPosition === results.at(-1)!.lastGlobalPosition);
    expect(batches).toEqual(results.map((r) => r.events));
    expect(errors.length).toBeGreaterThanOrEqual(1);
    expect(String(errors[0])).toMatch(/resubscribing/);
  });

  it('close() ends the $all subscription and releases the client', async () => {
    await waitFor(() => fake.openSubscriptions === 1);
    await store.close();
    expect(fake.openSubscriptions).toBe(0);
  });

  it('fails to open, with the reason, when $all cannot be read, and releases the client', async () => {
    const unreachable = new FakeEsdbClient();
    const dispose = jest.spyOn(unreachable, 'dispose');
    jest.spyOn(unreachable, 'readAll').mockImplementation(() => {
      throw new Error('14 UNAVAILABLE: No connection established');
    });

    await expect(openEsdbEventStore(asEsdbClient(unreachable))).rejects.toThrow(/cannot read \$all .*UNAVAILABLE/);
    expect(dispose).toHaveBeenCalled();
  });
});
