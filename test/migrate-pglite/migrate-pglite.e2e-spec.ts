import { execFile } from 'node:child_process';
import { access, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import type { StoredEvent } from '@app/event-store';
import { createEventStoreFromConfig } from '@app/event-store';
import { EVENTS_FILE, createEmbeddedEventStore } from '@app/event-store/embedded/embedded-event-store';
import { ensureEventStoreSchema } from '@app/event-store/sql/event-store.schema';

// `npm run migrate:pglite` (scripts/migrate-pglite.ts) imports the PGlite event store of versions
// before SQLite, run as an operator runs it: a process of its own, on a stopped service's DATA_DIR.

const ROOT = join(__dirname, '..', '..');
const IMPORTED_PGLITE_DIR = 'pglite-imported';

const migrate = async (...args: string[]) =>
  (await promisify(execFile)('npm', ['run', '--silent', 'migrate:pglite', '--', ...args], { cwd: ROOT, timeout: 120_000 })).stdout;

// PGlite's CommonJS build loads Node built-ins with dynamic import(), which jest's module sandbox
// rejects unless run with --experimental-vm-modules: loaded through Node's own require instead.
const nodeRequire = process.getBuiltinModule?.('node:module').createRequire(__filename) ?? require;
const { PGlite } = nodeRequire('@electric-sql/pglite') as typeof import('@electric-sql/pglite');

/** A database as the PGlite embedded store of earlier versions left it: two appends, three events. */
async function writePgliteStore(dir: string): Promise<void> {
  const pg = new PGlite(dir);
  try {
    await ensureEventStoreSchema({
      query: async (text, params) => (await pg.query(text, params ? [...params] : undefined)).rows as never[],
    });
    const insert = `INSERT INTO events (global_position, stream_id, revision, type, schema_version, data, metadata, recorded_at)
      VALUES ($1, $2, $3, $4, 1, $5::jsonb, $6::jsonb, $7)`;
    await pg.transaction(async (tx) => {
      await tx.query(insert, [1, 'task-1', 1, 'TaskCreated', '{"title":"a"}', '{"correlationId":"c-1"}', '2026-01-02T03:04:05.678901Z']);
      await tx.query(insert, [2, 'task-1', 2, 'TaskStarted', '{}', null, '2026-01-02T03:04:05.678901Z']);
      await tx.query('UPDATE event_positions SET last = 2');
    });
    await pg.transaction(async (tx) => {
      await tx.query(insert, [3, 'task-2', 1, 'TaskCreated', '[1,"x"]', null, '2026-01-02T03:04:06Z']);
      await tx.query('UPDATE event_positions SET last = 3');
    });
  } finally {
    await pg.close();
  }
}

describe('npm run migrate:pglite', () => {
  let dataDir: string;
  let dir: string;
  beforeEach(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'migrate-pglite-'));
    dir = join(dataDir, 'eventstore');
  });
  afterEach(() => rm(dataDir, { recursive: true, force: true }));

  it('imports every event once, keeping positions, revisions, recordedAt and batches, and moves PGlite aside', async () => {
    await writePgliteStore(dir);
    await expect(createEventStoreFromConfig({ DATA_DIR: dataDir })).rejects.toThrow('npm run migrate:pglite');

    expect(await migrate(dataDir)).toContain('imported 3 events');
    const store = await createEventStoreFromConfig({ DATA_DIR: dataDir });
    try {
      const expected: StoredEvent[] = [
        {
          streamId: 'task-1',
          revision: 1,
          globalPosition: 1,
          type: 'TaskCreated',
          schemaVersion: 1,
          data: { title: 'a' },
          metadata: { correlationId: 'c-1' },
          recordedAt: '2026-01-02T03:04:05.678Z',
        },
        {
          streamId: 'task-1',
          revision: 2,
          globalPosition: 2,
          type: 'TaskStarted',
          schemaVersion: 1,
          data: {},
          recordedAt: '2026-01-02T03:04:05.678Z',
        },
        {
          streamId: 'task-2',
          revision: 1,
          globalPosition: 3,
          type: 'TaskCreated',
          schemaVersion: 1,
          data: [1, 'x'],
          recordedAt: '2026-01-02T03:04:06.000Z',
        },
      ];
      expect(await store.readAll()).toEqual(expected);
      expect(await readdir(dir)).toEqual(expect.arrayContaining([EVENTS_FILE, IMPORTED_PGLITE_DIR]));
      await access(join(dir, IMPORTED_PGLITE_DIR, 'PG_VERSION'));
      await expect(access(join(dir, 'PG_VERSION'))).rejects.toThrow();

      const next = await store.appendToStream('task-1', [{ type: 'TaskDone', data: {}, schemaVersion: 1 }], 2);
      expect(next.events[0]).toMatchObject({ globalPosition: 4, revision: 3 });
    } finally {
      await store.close();
    }

    // Imported once: a second run finds nothing, and the store opens the SQLite file as it is.
    expect(await migrate(dataDir)).toContain('nothing to import');
    const reopened = await createEmbeddedEventStore({ dataDir: dir });
    try {
      expect((await reopened.readAll()).map((e) => e.globalPosition)).toEqual([1, 2, 3, 4]);
    } finally {
      await reopened.close();
    }
    // The imported batches stay batches (what onAppended's gap reads group by): one per PGlite transaction.
    const db = new Database(join(dir, EVENTS_FILE), { readonly: true });
    try {
      expect(db.prepare('SELECT global_position AS p, batch FROM events ORDER BY global_position').all()).toEqual([
        { p: 1, batch: 1 },
        { p: 2, batch: 1 },
        { p: 3, batch: 3 },
        { p: 4, batch: 4 },
      ]);
    } finally {
      db.close();
    }
  }, 120_000);
});
