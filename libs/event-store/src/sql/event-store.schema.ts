import type { SqlQueryable } from './sql-client';

/** Its violation means a concurrent append won the race for the same revisions. */
export const STREAM_REVISION_UNIQUE = 'events_stream_revision_unique';

/**
 * Global positions come from the one-row `event_positions` counter, not from a sequence.
 * Sequence values become visible out of commit order (A takes 10, B takes 11, B commits first),
 * so a reader that saw 11 would skip 10 forever. Updating the counter row inside the append
 * transaction holds its row lock until commit: positions are handed out in commit order and,
 * because a rolled-back append rolls the counter back too, without gaps.
 */
const DDL = [
  `CREATE TABLE IF NOT EXISTS events (
    global_position bigint PRIMARY KEY,
    stream_id text NOT NULL,
    revision int NOT NULL,
    type text NOT NULL,
    schema_version int NOT NULL,
    data jsonb NOT NULL,
    metadata jsonb,
    recorded_at timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT ${STREAM_REVISION_UNIQUE} UNIQUE (stream_id, revision)
  )`,
  `CREATE TABLE IF NOT EXISTS event_positions (
    id boolean PRIMARY KEY DEFAULT true CHECK (id),
    last bigint NOT NULL
  )`,
  `INSERT INTO event_positions (id, last)
    SELECT true, coalesce(max(global_position), 0) FROM events
    ON CONFLICT (id) DO NOTHING`,
];

/** Idempotent; callers that may race with other processes serialize it (see the adapters). */
export async function ensureEventStoreSchema(db: SqlQueryable): Promise<void> {
  for (const statement of DDL) await db.query(statement);
}
