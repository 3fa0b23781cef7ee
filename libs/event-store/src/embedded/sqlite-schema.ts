import type { Database } from 'better-sqlite3';

/**
 * The embedded store's one table. `global_position` is the rowid. `batch` is the first position of
 * the append that wrote the row, so batches can be told apart when read back (onAppended). `data`
 * and `metadata` hold JSON text; `recorded_at` an ISO 8601 timestamp.
 */
const DDL = `CREATE TABLE IF NOT EXISTS events (
  global_position INTEGER PRIMARY KEY,
  stream_id TEXT NOT NULL,
  revision INTEGER NOT NULL,
  type TEXT NOT NULL,
  schema_version INTEGER NOT NULL,
  data TEXT NOT NULL,
  metadata TEXT,
  recorded_at TEXT NOT NULL,
  batch INTEGER NOT NULL,
  UNIQUE (stream_id, revision)
) STRICT`;

export function ensureSqliteEventsSchema(db: Database): void {
  db.exec(DDL);
}
