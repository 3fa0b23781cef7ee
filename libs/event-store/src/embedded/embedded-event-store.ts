import type { PGlite as PGliteDb } from '@electric-sql/pglite';
import { EventStore } from '../event-store.port';
import { ensureEventStoreSchema } from '../sql/event-store.schema';
import { SqlClient, SqlQueryable } from '../sql/sql-client';
import { SqlEventStore } from '../sql/sql-event-store';
import { isAheadOfQueuedStatements } from '../statement-priority';
import { ensurePgliteDatabase } from './create-pglite-database';

// PGlite's CommonJS build loads Node built-ins with dynamic import(), which jest's module sandbox
// rejects unless run with --experimental-vm-modules. Loading it through Node's own require keeps it
// outside the sandbox, so every spec that starts the embedded store works; plain Node is unaffected.
const nodeRequire = process.getBuiltinModule?.('node:module').createRequire(__filename) ?? require;
const { PGlite } = nodeRequire('@electric-sql/pglite') as typeof import('@electric-sql/pglite');

export interface EmbeddedEventStoreOptions {
  /** Directory holding the PGlite database files; created (in a child process) when missing. */
  readonly dataDir: string;
}

/** The all-in-one mode's store: PostgreSQL compiled to WASM, in this process, on local files. */
export async function createEmbeddedEventStore(options: EmbeddedEventStoreOptions): Promise<EventStore> {
  await ensurePgliteDatabase(options.dataDir);
  const db = new PGlite(options.dataDir);
  await db.waitReady;
  const client = new PgliteSqlClient(db);
  try {
    await ensureEventStoreSchema(client);
    return await SqlEventStore.open({ client, dispose: () => client.run(() => db.close()) });
  } catch (error) {
    await db.close();
    throw error;
  }
}

/**
 * PGlite is a single connection: a query issued while a transaction is open would run inside
 * it. Every statement and transaction therefore waits its turn, in order, except that those
 * issued inside aheadOfQueuedStatements() go before the others waiting.
 */
class PgliteSqlClient implements SqlClient {
  private readonly queued: (() => Promise<void>)[] = [];
  private readonly ahead: (() => Promise<void>)[] = [];
  private draining = false;

  constructor(private readonly db: PGliteDb) {}

  query<Row>(text: string, params?: readonly unknown[]): Promise<Row[]> {
    return this.run(() => rows<Row>(this.db, text, params));
  }

  transaction<T>(fn: (tx: SqlQueryable) => Promise<T>): Promise<T> {
    return this.run(() => this.db.transaction((tx) => fn({ query: (text, params) => rows(tx, text, params) })));
  }

  run<T>(task: () => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const job = async () => {
        try {
          resolve(await task());
        } catch (error) {
          reject(error);
        }
      };
      (isAheadOfQueuedStatements() ? this.ahead : this.queued).push(job);
      void this.drain();
    });
  }

  /** Runs the waiting statements one at a time, those asked to go ahead first. */
  private async drain(): Promise<void> {
    if (this.draining) return;
    this.draining = true;
    try {
      let sliceStart = performance.now();
      for (;;) {
        if (performance.now() - sliceStart >= SLICE_MS) {
          await nextLoopTurn();
          sliceStart = performance.now();
        }
        const job = this.ahead.shift() ?? this.queued.shift();
        if (!job) return;
        await job();
      }
    } finally {
      this.draining = false;
    }
  }
}

/**
 * PGlite runs each statement synchronously (WebAssembly, synchronous file calls) and resolves it
 * as a microtask, so a queue of statements would otherwise run back to back without the event
 * loop ever polling: a burst of 200 appends (~0.5 s) let no socket be read or written, no timer
 * fire. The queue therefore gives the loop a turn once it has run for SLICE_MS, so pending I/O
 * (HTTP replies, SSE frames, webhook sends) waits at most about that long; see BENCHMARKS.md,
 * benchmark 8. Not before every statement: that costs a loop turn per statement for a gain
 * within the noise of that benchmark. (A turn before each once made the losing one of two
 * concurrent approvals answer 404: the executor took an empty tail read for a missing stream,
 * fixed in TaskCommandExecutor.load and tested in task-command.executor.int-spec.ts.)
 */
const SLICE_MS = 2;

const nextLoopTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

async function rows<Row>(db: Pick<PGliteDb, 'query'>, text: string, params?: readonly unknown[]): Promise<Row[]> {
  return (await db.query<Row>(text, params ? [...params] : undefined)).rows;
}
