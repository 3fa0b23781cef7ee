import type { Database, Statement } from 'better-sqlite3';
import { EventStoreClosedError, ExpectedRevisionConflictError } from '../event-store.errors';
import type {
  AppendResult,
  EventStore,
  ExpectedRevision,
  NewEvent,
  ReadAllOptions,
  ReadStreamOptions,
  StoredEvent,
  Unsubscribe,
} from '../event-store.port';
import { AppendedFeed } from '../sql/appended-feed';

interface EventRow {
  global_position: number;
  stream_id: string;
  revision: number;
  type: string;
  schema_version: number;
  data: string;
  metadata: string | null;
  recorded_at: string;
  batch?: number;
}

interface PendingAppend {
  readonly streamId: string;
  readonly events: readonly NewEvent[];
  readonly expected: ExpectedRevision;
  resolve(result: AppendResult): void;
  reject(error: unknown): void;
}

const COLUMNS = 'global_position, stream_id, revision, type, schema_version, data, metadata, recorded_at';

/** SQLite's "no limit". */
const NO_LIMIT = -1;

/**
 * Appends committed in one transaction at most. A group's events reach the listeners (SSE, the
 * agent loop, the webhook dispatcher) only after its COMMIT, so in a burst the first appends would
 * wait for the last; the next group commits on the next loop turn. Measured with benchmark 8 (a
 * hundred turns completing at once, their webhooks), alternating, 8 runs each: p99 ≤ 20 ms in 8
 * of 8 with 24 (12.2 ms the median run, 15.7 ms over the 800 samples) against 5 of 8 with 48
 * (19.4 ms, 21.1 ms). The cost, more commits when appends queue up, shows at saturation:
 * benchmark 1 at 500 creates/s, p50 34–39 ms against 32–33 ms with 48 (BENCHMARKS.md "Webhooks").
 */
const MAX_APPENDS_PER_COMMIT = 24;

/**
 * The embedded store over one SQLite connection (see embedded-event-store.ts for how it is opened).
 * better-sqlite3 runs each statement synchronously, in microseconds, so reads simply run when
 * called. Appends use group commit: those issued before the loop turns are committed together
 * (up to MAX_APPENDS_PER_COMMIT, the rest on the next turn) in one transaction, each inside a
 * savepoint so that one append's conflict rolls back only its own rows, and every caller's
 * promise settles after the COMMIT. Positions are taken inside the
 * write transaction, which only this connection can hold (locking_mode=EXCLUSIVE), so they
 * follow commit order without gaps.
 */
export class SqliteEventStore implements EventStore {
  private readonly feed: AppendedFeed;
  private readonly sql: ReturnType<typeof prepareStatements>;
  private pending: PendingAppend[] = [];
  private flushScheduled = false;
  private closing?: Promise<void>;

  constructor(
    private readonly db: Database,
    reportError: (error: unknown) => void = (error) => console.error('event store: onAppended delivery failed', error),
  ) {
    this.sql = prepareStatements(db);
    this.feed = new AppendedFeed(this.lastPosition(), async (after, upTo) => this.readBatches(after, upTo), reportError);
  }

  appendToStream(streamId: string, events: readonly NewEvent[], expected: ExpectedRevision): Promise<AppendResult> {
    if (this.closing) return Promise.reject(new EventStoreClosedError());
    if (events.length === 0) return Promise.reject(new Error(`appendToStream(${streamId}): events must not be empty`));
    return new Promise((resolve, reject) => {
      this.pending.push({ streamId, events, expected, resolve, reject });
      if (this.flushScheduled) return;
      this.flushScheduled = true;
      setImmediate(() => this.flush());
    });
  }

  async readStream(streamId: string, options: ReadStreamOptions = {}): Promise<StoredEvent[]> {
    this.assertOpen();
    const rows = this.sql.readStream.all(streamId, options.fromRevision ?? 1, options.maxCount ?? NO_LIMIT) as EventRow[];
    return rows.map(toStoredEvent);
  }

  async streamRevision(streamId: string): Promise<number> {
    this.assertOpen();
    return this.currentRevision(streamId);
  }

  async readAll(options: ReadAllOptions = {}): Promise<StoredEvent[]> {
    this.assertOpen();
    const rows = this.sql.readAll.all(options.after ?? 0, options.maxCount ?? NO_LIMIT) as EventRow[];
    return rows.map(toStoredEvent);
  }

  onAppended(listener: (events: readonly StoredEvent[]) => void): Unsubscribe {
    this.assertOpen();
    return this.feed.subscribe(listener);
  }

  /** Commits the appends already accepted, then closes the database (which checkpoints the WAL). */
  close(): Promise<void> {
    this.closing ??= (async () => {
      while (this.pending.length > 0) this.flush();
      this.feed.stop();
      this.db.close();
    })();
    return this.closing;
  }

  private assertOpen(): void {
    if (this.closing) throw new EventStoreClosedError();
  }

  private flush(): void {
    const group = this.pending.splice(0, MAX_APPENDS_PER_COMMIT);
    this.flushScheduled = false;
    // The rest on the next loop turn, after this group's listeners and continuations have run
    // (close() flushes them at once; the turn then finds nothing left).
    if (this.pending.length > 0) {
      this.flushScheduled = true;
      setImmediate(() => this.flush());
    }
    if (group.length === 0) return;
    let outcomes: (StoredEvent[] | { error: unknown })[];
    try {
      outcomes = this.commit(group);
    } catch (error) {
      for (const append of group) append.reject(error);
      return;
    }
    group.forEach((append, i) => {
      const outcome = outcomes[i];
      if ('error' in outcome) return append.reject(outcome.error);
      this.feed.offer(outcome);
      const last = outcome[outcome.length - 1];
      append.resolve({ nextExpectedRevision: last.revision, lastGlobalPosition: last.globalPosition, events: outcome });
    });
  }

  /** One transaction for the whole group; throws (having rolled back) only when it cannot commit. */
  private commit(group: readonly PendingAppend[]): (StoredEvent[] | { error: unknown })[] {
    this.sql.begin.run();
    try {
      let last = this.lastPosition();
      const recordedAt = new Date().toISOString();
      const outcomes = group.map((append) => {
        this.sql.savepoint.run();
        try {
          const stored = this.insert(append, last, recordedAt);
          this.sql.release.run();
          last = stored[stored.length - 1].globalPosition;
          return stored;
        } catch (error) {
          this.sql.rollbackToSavepoint.run();
          this.sql.release.run();
          return { error };
        }
      });
      this.sql.commit.run();
      return outcomes;
    } catch (error) {
      if (this.db.inTransaction) this.sql.rollback.run();
      throw error;
    }
  }

  private insert({ streamId, events, expected }: PendingAppend, lastPosition: number, recordedAt: string): StoredEvent[] {
    const current = this.currentRevision(streamId);
    if (expected !== 'any' && current !== (expected === 'no_stream' ? 0 : expected)) {
      throw new ExpectedRevisionConflictError(streamId, expected, current);
    }
    const batch = lastPosition + 1;
    return events.map((event, i) => {
      const row: EventRow = {
        global_position: batch + i,
        stream_id: streamId,
        revision: current + i + 1,
        type: event.type,
        schema_version: event.schemaVersion,
        data: JSON.stringify(event.data ?? null),
        metadata: event.metadata === undefined ? null : JSON.stringify(event.metadata),
        recorded_at: recordedAt,
        batch,
      };
      this.sql.insert.run(row);
      return toStoredEvent(row);
    });
  }

  private currentRevision(streamId: string): number {
    return (this.sql.streamRevision.get(streamId) as { revision: number }).revision;
  }

  private lastPosition(): number {
    return (this.sql.lastPosition.get() as { last: number }).last;
  }

  /** Batches are told apart by their `batch` column, the first position of their append. */
  private readBatches(after: number, upTo: number): StoredEvent[][] {
    const rows = this.sql.readRange.all(after, upTo) as EventRow[];
    const batches: StoredEvent[][] = [];
    rows.forEach((row, i) => {
      if (i === 0 || row.batch !== rows[i - 1].batch) batches.push([]);
      batches[batches.length - 1].push(toStoredEvent(row));
    });
    return batches;
  }
}

/** Prepared once: preparing is most of a small statement's cost. */
function prepareStatements(db: Database) {
  const statement = (sql: string): Statement => db.prepare(sql);
  return {
    begin: statement('BEGIN IMMEDIATE'),
    commit: statement('COMMIT'),
    rollback: statement('ROLLBACK'),
    savepoint: statement('SAVEPOINT append'),
    release: statement('RELEASE append'),
    rollbackToSavepoint: statement('ROLLBACK TO append'),
    lastPosition: statement('SELECT coalesce(max(global_position), 0) AS last FROM events'),
    streamRevision: statement('SELECT coalesce(max(revision), 0) AS revision FROM events WHERE stream_id = ?'),
    insert: statement(
      `INSERT INTO events (${COLUMNS}, batch)
       VALUES (@global_position, @stream_id, @revision, @type, @schema_version, @data, @metadata, @recorded_at, @batch)`,
    ),
    readStream: statement(`SELECT ${COLUMNS} FROM events WHERE stream_id = ? AND revision >= ? ORDER BY revision LIMIT ?`),
    readAll: statement(`SELECT ${COLUMNS} FROM events WHERE global_position > ? ORDER BY global_position LIMIT ?`),
    readRange: statement(
      `SELECT ${COLUMNS}, batch FROM events WHERE global_position > ? AND global_position <= ? ORDER BY global_position`,
    ),
  };
}

function toStoredEvent(row: EventRow): StoredEvent {
  const metadata = row.metadata === null ? null : (JSON.parse(row.metadata) as Record<string, unknown> | null);
  return {
    streamId: row.stream_id,
    revision: row.revision,
    globalPosition: row.global_position,
    type: row.type,
    schemaVersion: row.schema_version,
    data: JSON.parse(row.data) as unknown,
    ...(metadata === null ? {} : { metadata }),
    recordedAt: row.recorded_at,
  };
}
