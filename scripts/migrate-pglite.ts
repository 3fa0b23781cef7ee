import { PGlite } from '@electric-sql/pglite';
import Database from 'better-sqlite3';
import { access, mkdir, open, readdir, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { EVENTS_FILE, PGLITE_MARKER } from '../libs/event-store/src/embedded/embedded-event-store';
import { ensureSqliteEventsSchema } from '../libs/event-store/src/embedded/sqlite-schema';

// `npm run migrate:pglite -- [DATA_DIR]`: imports the event store of versions before SQLite (a
// PGlite database in DATA_DIR/eventstore) into DATA_DIR/eventstore/events.sqlite3, once, with the
// service stopped. The service refuses to start on such a directory and names this script; PGlite
// (~270 MiB RSS to open a database) is a devDependency, so only this one-off run loads it.

/** Where the PGlite files go once imported: kept, never read again, safe to delete. */
const IMPORTED_PGLITE_DIR = 'pglite-imported';

const PAGE_ROWS = 1_000;

interface PgliteEventRow {
  global_position: string;
  stream_id: string;
  revision: number;
  type: string;
  schema_version: number;
  data: string;
  metadata: string | null;
  recorded_at: Date;
  tx: string;
}

const exists = (path: string) =>
  access(path).then(
    () => true,
    () => false,
  );

/**
 * Imports the events of the PGlite database in `dir` into the SQLite file `target`, keeping
 * positions, revisions, batches and recordedAt, then moves the PGlite files into
 * `dir/pglite-imported`. The import writes a staging file renamed into place once complete, and
 * PG_VERSION moves last: a run that stops halfway redoes what is left on the next.
 */
async function importPgliteDatabase(dir: string, target: string): Promise<void> {
  if (!(await exists(target))) {
    const imported = await importEvents(dir, target);
    console.log(`imported ${imported} events from the PGlite database in ${dir} into ${target}`);
  }
  await moveAside(dir, target);
  console.log(`moved the PGlite files to ${join(dir, IMPORTED_PGLITE_DIR)}: never read again, safe to delete once checked`);
}

async function importEvents(dir: string, target: string): Promise<number> {
  const staging = `${target}.importing`;
  await removeSqliteFiles(staging);
  const pg = new PGlite(dir);
  const db = new Database(staging);
  let count = 0;
  try {
    await pg.waitReady;
    ensureSqliteEventsSchema(db);
    const [{ present }] = (await pg.query<{ present: boolean }>(`SELECT to_regclass('events') IS NOT NULL AS present`)).rows;
    const insert = db.prepare(
      `INSERT INTO events (global_position, stream_id, revision, type, schema_version, data, metadata, recorded_at, batch)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    let after = 0;
    let batch = 0;
    let batchTx: string | undefined;
    while (present) {
      // xmin, the inserting transaction, tells the batches apart (one append was one transaction).
      const { rows } = await pg.query<PgliteEventRow>(
        `SELECT global_position::text AS global_position, stream_id, revision, type, schema_version, data::text AS data,
           metadata::text AS metadata, recorded_at, xmin::text AS tx
         FROM events WHERE global_position > $1 ORDER BY global_position LIMIT ${PAGE_ROWS}`,
        [after],
      );
      if (rows.length === 0) break;
      db.transaction(() => {
        for (const row of rows) {
          const position = Number(row.global_position);
          if (row.tx !== batchTx) [batch, batchTx] = [position, row.tx];
          const recordedAt = new Date(row.recorded_at).toISOString();
          insert.run(position, row.stream_id, row.revision, row.type, row.schema_version, row.data, row.metadata, recordedAt, batch);
        }
      })();
      count += rows.length;
      after = Number(rows[rows.length - 1].global_position);
    }
    db.close();
    await rename(staging, target);
    await syncDirectory(dirname(target));
    return count;
  } finally {
    if (db.open) db.close();
    await pg.close();
    await removeSqliteFiles(staging);
  }
}

/** Moves every file but the SQLite store's into IMPORTED_PGLITE_DIR, PG_VERSION last. */
async function moveAside(dir: string, target: string): Promise<void> {
  const aside = join(dir, IMPORTED_PGLITE_DIR);
  await mkdir(aside, { recursive: true });
  const keep = new Set([IMPORTED_PGLITE_DIR, PGLITE_MARKER]);
  for (const name of await readdir(dir)) {
    if (keep.has(name) || name.startsWith(basename(target))) continue;
    await rename(join(dir, name), join(aside, name));
  }
  await rename(join(dir, PGLITE_MARKER), join(aside, PGLITE_MARKER));
  await syncDirectory(dir);
}

async function removeSqliteFiles(file: string): Promise<void> {
  for (const suffix of ['', '-journal', '-wal', '-shm']) await rm(`${file}${suffix}`, { force: true });
}

/** Makes a rename durable: the directory entry itself is flushed. */
async function syncDirectory(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** DATA_DIR (its eventstore folder holds the database) or the event store's folder itself. */
async function pgliteDirectory(given: string): Promise<string | undefined> {
  for (const dir of [join(given, 'eventstore'), given]) if (await exists(join(dir, PGLITE_MARKER))) return dir;
  return undefined;
}

async function main(): Promise<void> {
  const given = process.argv[2] ?? process.env.DATA_DIR ?? './data';
  const dir = await pgliteDirectory(given);
  if (!dir) {
    console.log(`no PGlite database in ${given} or ${join(given, 'eventstore')}: nothing to import`);
    return;
  }
  await importPgliteDatabase(dir, join(dir, EVENTS_FILE));
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? (error.stack ?? error.message) : error);
  process.exit(1);
});
