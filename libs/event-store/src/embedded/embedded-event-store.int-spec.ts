import { access, mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ExpectedRevisionConflictError, PgliteDataNotMigratedError } from '../event-store.errors';
import { createEventStoreFromConfig } from '../event-store.config';
import type { StoredEvent } from '../event-store.port';
import { describeEventStoreContract } from '../testing/event-store.contract';
import { waitFor } from '../testing/wait-for';
import { EVENTS_FILE, createEmbeddedEventStore } from './embedded-event-store';

const tempDir = () => mkdtemp(join(tmpdir(), 'event-store-'));

describeEventStoreContract('embedded (SQLite)', async () => {
  const dataDir = await tempDir();
  const store = await createEmbeddedEventStore({ dataDir }).catch(async (error: unknown) => {
    await rm(dataDir, { recursive: true, force: true });
    throw error;
  });
  return {
    store,
    cleanup: async () => {
      await store.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
});

describe('embedded event store', () => {
  let dir: string;
  beforeEach(async () => (dir = await tempDir()));
  afterEach(() => rm(dir, { recursive: true, force: true }));

  const event = (i: number) => ({ type: 'Counted', data: { i }, schemaVersion: 1 });

  it('keeps events in DATA_DIR/eventstore/events.sqlite3 across close and reopen, and continues positions', async () => {
    const first = await createEventStoreFromConfig({ DATA_DIR: dir });
    const written = await first.appendToStream('task-1', [{ type: 'TaskCreated', data: { n: 1 }, schemaVersion: 1 }], 'no_stream');
    await first.close();
    await access(join(dir, 'eventstore', EVENTS_FILE));

    const reopened = await createEmbeddedEventStore({ dataDir: join(dir, 'eventstore') });
    try {
      expect(await reopened.readAll()).toEqual(written.events);
      const next = await reopened.appendToStream('task-1', [{ type: 'TaskStarted', data: {}, schemaVersion: 1 }], 1);
      expect(next.events[0]).toMatchObject({ revision: 2, globalPosition: written.lastGlobalPosition + 1 });
    } finally {
      await reopened.close();
    }
  });

  it('refuses a directory still holding the PGlite store of an earlier version, naming the one-off import, and writes nothing', async () => {
    const eventStoreDir = join(dir, 'eventstore');
    await mkdir(eventStoreDir);
    await writeFile(join(eventStoreDir, 'PG_VERSION'), '17\n');
    const refused = createEventStoreFromConfig({ DATA_DIR: dir });
    await expect(refused).rejects.toBeInstanceOf(PgliteDataNotMigratedError);
    await expect(refused).rejects.toThrow(`npm run migrate:pglite -- ${eventStoreDir}`);
    expect(await readdir(eventStoreDir)).toEqual(['PG_VERSION']);
  });

  it('commits appends issued together as one group: a conflict fails only its own append, batches stay whole and in order', async () => {
    const store = await createEmbeddedEventStore({ dataDir: dir });
    try {
      const batches: (readonly StoredEvent[])[] = [];
      store.onAppended((events) => batches.push(events));
      const outcomes = await Promise.allSettled([
        store.appendToStream('a', [event(1), event(2)], 'no_stream'),
        store.appendToStream('a', [event(3)], 'no_stream'),
        store.appendToStream('b', [event(4), event(5), event(6)], 'no_stream'),
        store.appendToStream('a', [event(7)], 2),
      ]);

      expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'fulfilled']);
      expect((outcomes[1] as PromiseRejectedResult).reason).toBeInstanceOf(ExpectedRevisionConflictError);
      expect((outcomes[1] as PromiseRejectedResult).reason).toMatchObject({ actual: 2 });
      const all = await store.readAll();
      expect(all.map((e) => [e.globalPosition, e.streamId, e.revision, e.data])).toEqual([
        [1, 'a', 1, { i: 1 }],
        [2, 'a', 2, { i: 2 }],
        [3, 'b', 1, { i: 4 }],
        [4, 'b', 2, { i: 5 }],
        [5, 'b', 3, { i: 6 }],
        [6, 'a', 3, { i: 7 }],
      ]);
      await waitFor(() => batches.length === 3);
      expect(batches.map((b) => b.map((e) => e.globalPosition))).toEqual([[1, 2], [3, 4, 5], [6]]);
    } finally {
      await store.close();
    }
  });

  it('commits a burst in groups of at most 24, each notified before the next commits, positions gapless and in order', async () => {
    const store = await createEmbeddedEventStore({ dataDir: dir });
    try {
      const seenWhenResolved: number[] = [];
      let notified = 0;
      store.onAppended((events) => (notified += events.length));
      const burst = Array.from({ length: 100 }, (_, i) =>
        store.appendToStream(`s-${i}`, [event(i)], 'no_stream').then((result) => {
          seenWhenResolved.push(notified);
          return result.lastGlobalPosition;
        }),
      );

      expect(await Promise.all(burst)).toEqual(Array.from({ length: 100 }, (_, i) => i + 1));
      // The first 24 were notified (and settled) before the 25th was committed: 24 seen, not 100.
      const groups = [0, 24, 48, 72, 96].map((from) => seenWhenResolved.slice(from, from + 24));
      expect(groups).toEqual([24, 48, 72, 96, 100].map((seen, i) => Array(i < 4 ? 24 : 4).fill(seen)));
    } finally {
      await store.close();
    }
  });

  it('commits every accepted append when closed mid-burst, over several groups', async () => {
    const store = await createEmbeddedEventStore({ dataDir: dir });
    const burst = Array.from({ length: 120 }, (_, i) => store.appendToStream('a', [event(i)], 'any'));
    await store.close();
    expect((await Promise.all(burst)).map((r) => r.nextExpectedRevision)).toEqual(Array.from({ length: 120 }, (_, i) => i + 1));

    const reopened = await createEmbeddedEventStore({ dataDir: dir });
    await expect(reopened.streamRevision('a')).resolves.toBe(120);
    await reopened.close();
  });

  it('commits the appends already accepted when closed', async () => {
    const store = await createEmbeddedEventStore({ dataDir: dir });
    const pending = store.appendToStream('a', [event(1)], 'no_stream');
    await store.close();
    await expect(pending).resolves.toMatchObject({ nextExpectedRevision: 1 });

    const reopened = await createEmbeddedEventStore({ dataDir: dir });
    await expect(reopened.streamRevision('a')).resolves.toBe(1);
    await reopened.close();
  });

  it('refuses a second store on the same directory while the first is open', async () => {
    const store = await createEmbeddedEventStore({ dataDir: dir });
    try {
      await store.appendToStream('a', [event(1)], 'no_stream');
      await expect(createEmbeddedEventStore({ dataDir: dir })).rejects.toThrow(/in use by another process/);
    } finally {
      await store.close();
    }
  });
});
