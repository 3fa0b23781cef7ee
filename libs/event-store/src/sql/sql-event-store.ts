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
import { AppendedFeed } from './appended-feed';
import { STREAM_REVISION_UNIQUE } from './event-store.schema';
import type { SqlClient, SqlQueryable } from './sql-client';

export interface SqlEventStoreOptions {
  readonly client: SqlClient;
  /** PostgreSQL only: each append NOTIFYs this channel with its last position when it commits. */
  readonly notifyChannel?: string;
  /** Called with an append's last position once it has committed (notifications over a bus). */
  readonly afterCommit?: (position: number) => void;
  /** Releases the adapter's connections; called once, by close(). */
  readonly dispose: () => Promise<void>;
  readonly reportError?: (error: unknown) => void;
}

interface EventRow {
  global_position: string | number;
  stream_id: string;
  revision: number;
  type: string;
  schema_version: number;
  data: unknown;
  metadata: Record<string, unknown> | null;
  recorded_at: Date | string;
  tx?: string;
}

const COLUMNS = 'global_position, stream_id, revision, type, schema_version, data, metadata, recorded_at';

/** The PostgreSQL EventStore; its adapter supplies a SqlClient (and notifications). */
export class SqlEventStore implements EventStore {
  private readonly feed: AppendedFeed;
  private closing?: Promise<void>;

  private constructor(
    private readonly options: SqlEventStoreOptions,
    lastPosition: number,
  ) {
    const report = options.reportError ?? ((error) => console.error('event store: onAppended delivery failed', error));
    this.feed = new AppendedFeed(lastPosition, (after, upTo) => this.readBatches(after, upTo), report);
  }

  /** Opens a store over a database whose schema exists (see ensureEventStoreSchema). */
  static async open(options: SqlEventStoreOptions): Promise<SqlEventStore> {
    const [{ last }] = await options.client.query<{ last: string | number }>('SELECT last FROM event_positions');
    return new SqlEventStore(options, Number(last));
  }

  /** Tells the store that another process has committed events up to `position`. */
  announce(position: number): void {
    this.feed.announce(position);
  }

  async appendToStream(streamId: string, events: readonly NewEvent[], expected: ExpectedRevision): Promise<AppendResult> {
    this.assertOpen();
    if (events.length === 0) throw new Error(`appendToStream(${streamId}): events must not be empty`);
    let stored: StoredEvent[];
    try {
      const channel = this.options.notifyChannel;
      // One statement is one implicit transaction, so no BEGIN/COMMIT round trips unless
      // PostgreSQL's NOTIFY has to go in the same transaction.
      stored = channel
        ? await this.options.client.transaction(async (tx) => {
            const rows = await this.insert(tx, streamId, events, expected);
            await tx.query('SELECT pg_notify($1, $2)', [channel, String(rows[rows.length - 1].globalPosition)]);
            return rows;
          })
        : await this.insert(this.options.client, streamId, events, expected);
    } catch (error) {
      const e = error as { code?: string; constraint?: string };
      if (e.code === '23505' && e.constraint === STREAM_REVISION_UNIQUE) {
        throw new ExpectedRevisionConflictError(streamId, expected, await this.streamRevision(streamId));
      }
      throw error;
    }
    this.feed.offer(stored);
    const last = stored[stored.length - 1];
    this.options.afterCommit?.(last.globalPosition);
    return { nextExpectedRevision: last.revision, lastGlobalPosition: last.globalPosition, events: stored };
  }

  async readStream(streamId: string, options: ReadStreamOptions = {}): Promise<StoredEvent[]> {
    this.assertOpen();
    const rows = await this.options.client.query<EventRow>(
      `SELECT ${COLUMNS} FROM events WHERE stream_id = $1 AND revision >= $2 ORDER BY revision LIMIT $3`,
      [streamId, options.fromRevision ?? 1, options.maxCount ?? null],
    );
    return rows.map(toStoredEvent);
  }

  async streamRevision(streamId: string): Promise<number> {
    this.assertOpen();
    return currentRevision(this.options.client, streamId);
  }

  async readAll(options: ReadAllOptions = {}): Promise<StoredEvent[]> {
    this.assertOpen();
    const rows = await this.options.client.query<EventRow>(
      `SELECT ${COLUMNS} FROM events WHERE global_position > $1 ORDER BY global_position LIMIT $2`,
      [options.after ?? 0, options.maxCount ?? null],
    );
    return rows.map(toStoredEvent);
  }

  onAppended(listener: (events: readonly StoredEvent[]) => void): Unsubscribe {
    this.assertOpen();
    return this.feed.subscribe(listener);
  }

  close(): Promise<void> {
    this.closing ??= (async () => {
      this.feed.stop();
      await this.options.dispose();
    })();
    return this.closing;
  }

  private assertOpen(): void {
    if (this.closing) throw new EventStoreClosedError();
  }

  /**
   * Checks the expected revision, takes the positions and inserts, in one statement. Updating the
   * counter row locks it until commit, so appends take turns and positions follow commit order
   * (see event-store.schema.ts). When the check fails the counter is not touched and nothing is
   * inserted. Under contention PostgreSQL may check against a snapshot older than the lock; a
   * stale check then collides with UNIQUE(stream_id, revision), which is reported as a conflict.
   */
  private async insert(
    db: SqlQueryable,
    streamId: string,
    events: readonly NewEvent[],
    expected: ExpectedRevision,
  ): Promise<StoredEvent[]> {
    const expectedNumber = expected === 'any' ? null : expected === 'no_stream' ? 0 : expected;
    const params: unknown[] = [streamId, events.length, expectedNumber];
    const values = events.map((event, i) => {
      const at = params.push(i + 1, event.type, event.schemaVersion, JSON.stringify(event.data ?? null));
      params.push(event.metadata === undefined ? null : JSON.stringify(event.metadata));
      return `($${at - 3}::int, $${at - 2}::text, $${at - 1}::int, $${at}::jsonb, $${at + 1}::jsonb)`;
    });
    const rows = await db.query<EventRow>(
      `WITH cur AS (SELECT coalesce(max(revision), 0) AS revision FROM events WHERE stream_id = $1),
       pos AS (
         UPDATE event_positions SET last = last + $2::int
         WHERE $3::int IS NULL OR (SELECT revision FROM cur) = $3::int
         RETURNING last
       )
       INSERT INTO events (global_position, stream_id, revision, type, schema_version, data, metadata)
       SELECT pos.last - $2::int + v.i, $1, cur.revision + v.i, v.type, v.schema_version, v.data, v.metadata
       FROM pos, cur, (VALUES ${values.join(', ')}) AS v(i, type, schema_version, data, metadata)
       RETURNING ${COLUMNS}`,
      params,
    );
    if (rows.length === 0) throw new ExpectedRevisionConflictError(streamId, expected, await currentRevision(db, streamId));
    return rows.map(toStoredEvent).sort((a, b) => a.globalPosition - b.globalPosition);
  }

  /** Batches are told apart by xmin, the id of the transaction that inserted the row. */
  private async readBatches(after: number, upTo: number): Promise<StoredEvent[][]> {
    const rows = await this.options.client.query<EventRow>(
      `SELECT ${COLUMNS}, xmin::text AS tx FROM events
       WHERE global_position > $1 AND global_position <= $2 ORDER BY global_position`,
      [after, upTo],
    );
    const batches: StoredEvent[][] = [];
    rows.forEach((row, i) => {
      if (i === 0 || row.tx !== rows[i - 1].tx) batches.push([]);
      batches[batches.length - 1].push(toStoredEvent(row));
    });
    return batches;
  }
}

async function currentRevision(db: SqlQueryable, streamId: string): Promise<number> {
  const [{ revision }] = await db.query<{ revision: number }>(
    'SELECT coalesce(max(revision), 0) AS revision FROM events WHERE stream_id = $1',
    [streamId],
  );
  return Number(revision);
}

function toStoredEvent(row: EventRow): StoredEvent {
  return {
    streamId: row.stream_id,
    revision: Number(row.revision),
    globalPosition: Number(row.global_position),
    type: row.type,
    schemaVersion: Number(row.schema_version),
    data: row.data,
    ...(row.metadata === null ? {} : { metadata: row.metadata }),
    recordedAt: new Date(row.recorded_at).toISOString(),
  };
}
