import { EventStoreClosedError, ExpectedRevisionConflictError } from '../event-store.errors';
import type { AppendResult, EventStore, NewEvent, StoredEvent } from '../event-store.port';
import { waitFor } from './wait-for';

export interface EventStoreFixture {
  readonly store: EventStore;
  cleanup(): Promise<void>;
}

const SLOW_MS = 60_000;

/** Every event store adapter's spec calls this with its own factory; one store per suite. */
export function describeEventStoreContract(name: string, factory: () => Promise<EventStoreFixture>): void {
  describe(`EventStore contract: ${name}`, () => {
    let store: EventStore;
    let cleanup: () => Promise<void>;
    let n = 0;
    const newStreamId = (label = 'stream') => `${label}-${process.pid}-${Date.now()}-${n++}`;

    beforeAll(async () => ({ store, cleanup } = await factory()), SLOW_MS);
    afterAll(async () => cleanup?.());

    describe('appending and reading a stream', () => {
      it('reads back appended events with revisions 1..n, type, data, metadata and schema version', async () => {
        const streamId = newStreamId();
        const events: NewEvent[] = [
          { type: 'TaskCreated', data: { title: 'a', tags: ['x'] }, schemaVersion: 2, metadata: { correlationId: 'c-1' } },
          { type: 'TaskStarted', data: { at: 1 }, schemaVersion: 1 },
          { type: 'TaskNoted', data: ['list', 2], schemaVersion: 1 },
        ];
        const result = await store.appendToStream(streamId, events, 'no_stream');

        const read = await store.readStream(streamId);
        expect(read).toEqual(result.events);
        expect(read.map((e) => ({ type: e.type, data: e.data, schemaVersion: e.schemaVersion, metadata: e.metadata }))).toEqual(events);
        expect(read.map((e) => [e.streamId, e.revision])).toEqual([
          [streamId, 1],
          [streamId, 2],
          [streamId, 3],
        ]);
        expect(read.every((e) => typeof e.globalPosition === 'number' && !Number.isNaN(Date.parse(e.recordedAt)))).toBe(true);
        expect(result).toMatchObject({ nextExpectedRevision: 3, lastGlobalPosition: read[2].globalPosition });
      });

      it('continues revisions where the previous append ended', async () => {
        const streamId = newStreamId();
        await store.appendToStream(streamId, [event(1), event(2)], 'no_stream');
        const second = await store.appendToStream(streamId, [event(3)], 2);

        expect(second.nextExpectedRevision).toBe(3);
        expect(await store.streamRevision(streamId)).toBe(3);
        expect((await store.readStream(streamId)).map((e) => e.data)).toEqual([{ i: 1 }, { i: 2 }, { i: 3 }]);
      });

      it('rejects an empty list of events and writes nothing', async () => {
        const streamId = newStreamId();
        await expect(store.appendToStream(streamId, [], 'any')).rejects.toThrow(/empty/);
        expect(await store.streamRevision(streamId)).toBe(0);
      });

      it('reads an unknown stream as empty, at revision 0', async () => {
        const streamId = newStreamId('unknown');
        expect(await store.readStream(streamId)).toEqual([]);
        expect(await store.streamRevision(streamId)).toBe(0);
      });

      it('reads from a given revision and at most maxCount events', async () => {
        const streamId = newStreamId();
        await store.appendToStream(streamId, [1, 2, 3, 4, 5].map(event), 'no_stream');

        expect((await store.readStream(streamId, { fromRevision: 3 })).map((e) => e.revision)).toEqual([3, 4, 5]);
        expect((await store.readStream(streamId, { fromRevision: 2, maxCount: 2 })).map((e) => e.revision)).toEqual([2, 3]);
        expect(await store.readStream(streamId, { fromRevision: 6 })).toEqual([]);
      });
    });

    describe('expected revision', () => {
      it("rejects 'no_stream' when the stream exists", async () => {
        const streamId = newStreamId();
        await store.appendToStream(streamId, [event(1)], 'no_stream');

        const error = await store.appendToStream(streamId, [event(2)], 'no_stream').catch((e: unknown) => e);
        expect(error).toBeInstanceOf(ExpectedRevisionConflictError);
        expect(error).toMatchObject({ streamId, expected: 'no_stream', actual: 1, code: 'EVENT_STORE.EXPECTED_REVISION_CONFLICT' });
      });

      it('rejects a revision that is not the current one and writes nothing', async () => {
        const streamId = newStreamId();
        await store.appendToStream(streamId, [event(1), event(2)], 'no_stream');

        await expect(store.appendToStream(streamId, [event(3)], 1)).rejects.toMatchObject({
          name: 'ExpectedRevisionConflictError',
          actual: 2,
        });
        await expect(store.appendToStream(streamId, [event(3)], 3)).rejects.toBeInstanceOf(ExpectedRevisionConflictError);
        await expect(store.appendToStream(newStreamId(), [event(1)], 1)).rejects.toMatchObject({ actual: 0 });
        expect(await store.streamRevision(streamId)).toBe(2);
      });

      it("appends with 'any' whatever the current revision", async () => {
        const streamId = newStreamId();
        await store.appendToStream(streamId, [event(1)], 'any');
        const result = await store.appendToStream(streamId, [event(2)], 'any');
        expect(result.nextExpectedRevision).toBe(2);
      });

      it('lets exactly one of concurrent appends with the same expected revision win', async () => {
        const streamId = newStreamId();
        await store.appendToStream(streamId, [event(0)], 'no_stream');

        const outcomes = await Promise.allSettled(Array.from({ length: 10 }, (_, i) => store.appendToStream(streamId, [event(i)], 1)));

        const rejected = outcomes.filter((o): o is PromiseRejectedResult => o.status === 'rejected');
        expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
        expect(rejected).toHaveLength(9);
        for (const { reason } of rejected) expect(reason).toBeInstanceOf(ExpectedRevisionConflictError);
        expect(await store.readStream(streamId)).toHaveLength(2);
      });
    });

    describe('reading all streams', () => {
      it('returns events of every stream in global order, after a position, at most maxCount', async () => {
        const [a, b] = [newStreamId('a'), newStreamId('b')];
        const before = await lastPosition(store);
        const first = await store.appendToStream(a, [event(1), event(2)], 'no_stream');
        const second = await store.appendToStream(b, [event(3)], 'no_stream');
        const third = await store.appendToStream(a, [event(4)], 2);
        const appended = [...first.events, ...second.events, ...third.events];

        const all = await store.readAll({ after: before });
        expect(all).toEqual(appended);
        expect(isStrictlyIncreasing(all.map((e) => e.globalPosition))).toBe(true);
        expect(await store.readAll({ after: first.lastGlobalPosition, maxCount: 1 })).toEqual(second.events);
        expect(await store.readAll({ after: third.lastGlobalPosition })).toEqual([]);
        expect((await store.readAll({ maxCount: 1 }))[0].globalPosition).toBeLessThanOrEqual(appended[0].globalPosition);
      });
    });

    describe('onAppended', () => {
      it('delivers every batch committed after subscribing, once, in global order', async () => {
        const batches: (readonly StoredEvent[])[] = [];
        const unsubscribe = store.onAppended((events) => batches.push(events));
        const streams = [newStreamId(), newStreamId(), newStreamId()];
        const results = await Promise.all(streams.map((s) => store.appendToStream(s, [event(1), event(2)], 'no_stream')));
        results.push(await store.appendToStream(streams[0], [event(3)], 2));
        const last = Math.max(...results.map((r) => r.lastGlobalPosition));

        await waitFor(() => batches.at(-1)?.at(-1)?.globalPosition === last);
        unsubscribe();
        expect(batches).toEqual(sortByPosition(results).map((r) => r.events));
      });

      it('stops delivering after unsubscribe', async () => {
        const received: StoredEvent[] = [];
        const probe: StoredEvent[] = [];
        const unsubscribe = store.onAppended((events) => received.push(...events));
        const stopProbe = store.onAppended((events) => probe.push(...events));
        const streamId = newStreamId();
        await store.appendToStream(streamId, [event(1)], 'no_stream');
        await waitFor(() => received.length === 1);

        unsubscribe();
        const later = await store.appendToStream(streamId, [event(2)], 1);
        await waitFor(() => probe.at(-1)?.globalPosition === later.lastGlobalPosition);
        stopProbe();
        expect(received.map((e) => e.revision)).toEqual([1]);
      });

      it('keeps appending and delivering to other listeners when a listener throws', async () => {
        const quiet = jest.spyOn(console, 'error').mockImplementation(() => undefined);
        const received: StoredEvent[] = [];
        const stopThrowing = store.onAppended(() => {
          throw new Error('listener failure');
        });
        const stop = store.onAppended((events) => received.push(...events));
        try {
          const streamId = newStreamId();
          await store.appendToStream(streamId, [event(1)], 'no_stream');
          await store.appendToStream(streamId, [event(2)], 1);
          await waitFor(() => received.length === 2);
          expect(received.map((e) => e.revision)).toEqual([1, 2]);
        } finally {
          stopThrowing();
          stop();
          quiet.mockRestore();
        }
      });
    });

    describe('concurrent writers', () => {
      it(
        'a readAll poller and an onAppended listener each see every event once, in increasing position',
        async () => {
          const start = await lastPosition(store);
          const delivered: StoredEvent[] = [];
          const stop = store.onAppended((events) => delivered.push(...events));
          const polled: StoredEvent[] = [];
          let checkpoint = start;
          const poll = async () => {
            const page = await store.readAll({ after: checkpoint, maxCount: 100 });
            polled.push(...page);
            checkpoint = page.at(-1)?.globalPosition ?? checkpoint;
            return page.length;
          };
          let writing = true;
          const poller = (async () => {
            while (writing) {
              await poll();
              await new Promise((r) => setImmediate(r));
            }
            while ((await poll()) > 0);
          })();

          const results = (await Promise.all(Array.from({ length: 8 }, () => writeStream(store, newStreamId('writer'), 50)))).flat();
          writing = false;
          await poller;

          const appended = sortByPosition(results).flatMap((r) => r.events);
          const all = await store.readAll({ after: start });
          expect(all.map(key)).toEqual(appended.map(key));
          expect(polled.map(key)).toEqual(appended.map(key));
          expect(isStrictlyIncreasing(polled.map((e) => e.globalPosition))).toBe(true);
          expect(new Set(polled.map((e) => `${e.streamId}#${e.revision}`)).size).toBe(polled.length);

          const end = appended.at(-1)!.globalPosition;
          await waitFor(() => delivered.at(-1)?.globalPosition === end, 10_000);
          stop();
          expect(delivered.map(key)).toEqual(appended.map(key));
        },
        SLOW_MS,
      );
    });

    it(
      'rejects every call once closed',
      async () => {
        const own = await factory();
        try {
          await own.store.appendToStream(newStreamId(), [event(1)], 'no_stream');
          await own.store.close();
          await own.store.close();

          await expect(own.store.appendToStream(newStreamId(), [event(1)], 'any')).rejects.toBeInstanceOf(EventStoreClosedError);
          await expect(own.store.readStream(newStreamId())).rejects.toBeInstanceOf(EventStoreClosedError);
          await expect(own.store.readAll()).rejects.toBeInstanceOf(EventStoreClosedError);
          await expect(own.store.streamRevision(newStreamId())).rejects.toBeInstanceOf(EventStoreClosedError);
          expect(() => own.store.onAppended(() => undefined)).toThrow(EventStoreClosedError);
        } finally {
          await own.cleanup();
        }
      },
      SLOW_MS,
    );
  });
}

function event(i: number): NewEvent {
  return { type: 'Counted', data: { i }, schemaVersion: 1 };
}

/** Appends `count` batches of 1-3 events one after another, each expecting the previous revision. */
async function writeStream(store: EventStore, streamId: string, count: number): Promise<AppendResult[]> {
  const results: AppendResult[] = [];
  let revision = 0;
  for (let i = 0; i < count; i++) {
    const batch = Array.from({ length: (i % 3) + 1 }, (_, j) => event(i * 10 + j));
    const result = await store.appendToStream(streamId, batch, revision === 0 ? 'no_stream' : revision);
    revision = result.nextExpectedRevision;
    results.push(result);
  }
  return results;
}

async function lastPosition(store: EventStore): Promise<number> {
  return (await store.readAll()).at(-1)?.globalPosition ?? 0;
}

const key = (e: StoredEvent) => `${e.globalPosition}:${e.streamId}#${e.revision}`;

const sortByPosition = (results: AppendResult[]) => [...results].sort((a, b) => a.lastGlobalPosition - b.lastGlobalPosition);

const isStrictlyIncreasing = (values: number[]) => values.every((v, i) => i === 0 || v > values[i - 1]);
