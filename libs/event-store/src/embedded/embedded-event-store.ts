import Database from 'better-sqlite3';
import { access, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { PgliteDataNotMigratedError } from '../event-store.errors';
import type { EventStore } from '../event-store.port';
import { ensureSqliteEventsSchema } from './sqlite-schema';
import { SqliteEventStore } from './sqlite-event-store';

export interface EmbeddedEventStoreOptions {
  /** Directory holding the store's SQLite file (events.sqlite3 and its -wal file); created when missing. */
  readonly dataDir: string;
}

export const EVENTS_FILE = 'events.sqlite3';

/** PostgreSQL's data directory marker: versions before SQLite kept a PGlite database here. */
export const PGLITE_MARKER = 'PG_VERSION';

/** How long opening waits for a lock another connection holds before giving up. */
const BUSY_TIMEOUT_MS = 2_000;

/**
 * Durability: WAL with synchronous=NORMAL. A COMMIT has written the transaction to the WAL file
 * (reached the kernel) before the appends in it are acknowledged, so a kill -9 or crash of this
 * process never loses an acknowledged append. The WAL is fsynced at each checkpoint (every ~4 MiB
 * of WAL, and at close), not at each commit: a power loss or kernel crash can lose the appends
 * acknowledged since the last checkpoint, never leave a half-written one, and the file stays
 * consistent. FULL (an fsync per commit) measured 4–8 ms per COMMIT on this machine's disk, run on
 * the event loop's thread, against ~0.05 ms for NORMAL (BENCHMARKS.md, "Embedded store").
 */
const SYNCHRONOUS = 'NORMAL';

/**
 * SQLite's page cache for this connection, in KiB (a negative cache_size). better-sqlite3's default
 * is 16 MiB, which fills as the file grows, so the process's RSS kept growing with the number of
 * tasks until ~10,000 of them (BENCHMARKS.md, issue 19). What is read hot is the recent end of the
 * log and the indexes; the rest comes from the kernel's page cache at the cost of a pread.
 */
const SQLITE_CACHE_KIB = 4096;

/**
 * The all-in-one mode's store: SQLite (better-sqlite3) in this process, in `${dataDir}/events.sqlite3`.
 * A directory still holding the PGlite database of an earlier version is refused, naming the
 * one-off import (scripts/migrate-pglite.ts): started on it, the store would hand out positions the
 * import then also needs.
 */
export async function createEmbeddedEventStore(options: EmbeddedEventStoreOptions): Promise<EventStore> {
  await mkdir(options.dataDir, { recursive: true });
  const file = join(options.dataDir, EVENTS_FILE);
  const pglite = await access(join(options.dataDir, PGLITE_MARKER)).then(
    () => true,
    () => false,
  );
  if (pglite) throw new PgliteDataNotMigratedError(options.dataDir);
  const db = openEventsDatabase(file);
  try {
    return new SqliteEventStore(db);
  } catch (error) {
    db.close();
    throw error;
  }
}

function openEventsDatabase(file: string): Database.Database {
  const db = new Database(file, { timeout: BUSY_TIMEOUT_MS });
  try {
    // Exclusive before WAL: the lock is held for the connection's life, so a second process on the
    // same DATA_DIR fails here instead of writing positions this one also hands out, and SQLite
    // keeps the WAL index in memory rather than in a shared -shm file.
    db.pragma('locking_mode = EXCLUSIVE');
    db.pragma('journal_mode = WAL');
    db.pragma(`synchronous = ${SYNCHRONOUS}`);
    db.pragma(`cache_size = -${SQLITE_CACHE_KIB}`);
    ensureSqliteEventsSchema(db);
    return db;
  } catch (error) {
    db.close();
    if ((error as { code?: string }).code === 'SQLITE_BUSY') {
      throw new Error(`${file} is in use by another process: the embedded event store allows one process per DATA_DIR`, {
        cause: error,
      });
    }
    throw error;
  }
}
