import Database from 'better-sqlite3';
import { mkdirSync, rmSync } from 'node:fs';
import { dirname } from 'node:path';
import type { TaskView, TurnQueueEntry } from '@app/task-domain';

/** A view changed since the last save; `position` (its TaskCreated's) only counts for a view the table does not hold yet. */
export interface ChangedView {
  readonly view: TaskView;
  readonly position: number;
}

/** One save: the views and queue lines changed since the last one, and the position they are all at. */
export interface TaskViewsChanges {
  readonly checkpoint: number;
  readonly views: Iterable<ChangedView>;
  /** Task id → its entry, or undefined once it left the line. */
  readonly lines: Iterable<readonly [string, TurnQueueEntry | undefined]>;
}

export interface ListedView {
  readonly id: string;
  readonly position: number;
  readonly json: string;
}

/** How long opening waits for another process holding the file (sandbox instances share a DATA_DIR) before going in-memory. */
const BUSY_TIMEOUT_MS = 200;
const CACHE_KIB = 2048;

/**
 * The task views on disk: one row per task (its JSON, plus the columns the list, the status
 * counts and the restart need) and the global position they are at, saved in one transaction so
 * the rows and the checkpoint always match. `user_version` holds the view shape's version: a file
 * of another version is emptied, and the views rebuilt from the event store.
 *
 * Without a path, or when another process holds the file, the table lives in memory (no
 * checkpoint survives the process; still off the V8 heap).
 */
export class TaskViewsTable {
  private readonly statements: ReturnType<typeof prepare>;

  private constructor(private readonly db: Database.Database) {
    this.statements = prepare(db);
  }

  static open(path: string | undefined, version: number): TaskViewsTable {
    if (path === undefined) return new TaskViewsTable(openDatabase(':memory:', version));
    mkdirSync(dirname(path), { recursive: true });
    try {
      return new TaskViewsTable(openDatabase(path, version));
    } catch (error) {
      const code = String((error as { code?: unknown }).code ?? '');
      // Held by another process (any of SQLite's busy or locked codes): never touch its files.
      if (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED')) {
        return new TaskViewsTable(openDatabase(':memory:', version));
      }
      // Not a database, or a damaged one: it is only a cache of the event store, so start over.
      // Anything else (permissions, a full disk) is the operator's to see, not a reason to delete.
      if (code !== 'SQLITE_NOTADB' && !code.startsWith('SQLITE_CORRUPT')) throw error;
      for (const suffix of ['', '-wal', '-shm']) rmSync(`${path}${suffix}`, { force: true });
      return new TaskViewsTable(openDatabase(path, version));
    }
  }

  get checkpoint(): number {
    const row = this.statements.checkpoint.get() as { value: number } | undefined;
    return row?.value ?? 0;
  }

  read(id: string): string | undefined {
    return (this.statements.read.get(id) as { json: string } | undefined)?.json;
  }

  /** The tenant's views below `before` (a TaskCreated position), newest first. */
  listBelow(tenantId: string, before: number, limit: number, includeHidden: boolean): ListedView[] {
    const statement = includeHidden ? this.statements.listAll : this.statements.listShown;
    return statement.all(tenantId, before, limit) as ListedView[];
  }

  /** Whether the tenant has any view (shown or not) below `before`. */
  hasBelow(tenantId: string, before: number): boolean {
    return this.statements.anyBelow.get(tenantId, before) !== undefined;
  }

  countByStatus(): Map<string, number> {
    const rows = this.statements.countByStatus.all() as { status: string; n: number }[];
    return new Map(rows.map((r) => [r.status, r.n]));
  }

  idsWithStatus(statuses: readonly string[]): string[] {
    return (
      this.db.prepare(`SELECT id FROM views WHERE status IN (${statuses.map(() => '?').join(',')}) ORDER BY position`).all(...statuses) as {
        id: string;
      }[]
    ).map((r) => r.id);
  }

  lines(): TurnQueueEntry[] {
    return (this.statements.lines.all() as { json: string }[]).map((r) => JSON.parse(r.json) as TurnQueueEntry);
  }

  save(changes: TaskViewsChanges): void {
    const s = this.statements;
    this.db.transaction(() => {
      for (const { view, position } of changes.views) {
        s.upsertView.run(view.id, view.tenantId, position, view.status, view.showInHistory ? 1 : 0, JSON.stringify(view));
      }
      for (const [taskId, entry] of changes.lines) {
        if (entry) s.upsertLine.run(taskId, JSON.stringify(entry));
        else s.deleteLine.run(taskId);
      }
      s.setCheckpoint.run(changes.checkpoint);
    })();
  }

  close(): void {
    this.db.close();
  }
}

function openDatabase(path: string, version: number): Database.Database {
  const db = new Database(path, { timeout: BUSY_TIMEOUT_MS });
  try {
    // Exclusive: one process per file (a second one, e.g. another sandbox instance on a shared
    // DATA_DIR, gets SQLITE_BUSY and goes in-memory instead of mixing its rows with ours).
    db.pragma('locking_mode = EXCLUSIVE');
    db.pragma('journal_mode = WAL');
    // A lost save only means catching up from an earlier checkpoint: no fsync per save.
    db.pragma('synchronous = NORMAL');
    // Rows are read only for views no longer held in memory: a small page cache (better-sqlite3's
    // default is 16 MiB, filled as the file grows with the number of tasks) is enough.
    db.pragma(`cache_size = -${CACHE_KIB}`);
    if (db.pragma('user_version', { simple: true }) !== version) {
      db.exec('DROP TABLE IF EXISTS views; DROP TABLE IF EXISTS lines; DROP TABLE IF EXISTS checkpoint;');
      db.pragma(`user_version = ${version}`);
    }
    db.exec(`
      CREATE TABLE IF NOT EXISTS views (
        id TEXT PRIMARY KEY, tenant TEXT NOT NULL, position INTEGER NOT NULL,
        status TEXT NOT NULL, shown INTEGER NOT NULL, json TEXT NOT NULL
      );
      CREATE INDEX IF NOT EXISTS views_by_tenant ON views (tenant, position);
      CREATE INDEX IF NOT EXISTS views_by_status ON views (status);
      CREATE TABLE IF NOT EXISTS lines (task_id TEXT PRIMARY KEY, json TEXT NOT NULL);
      CREATE TABLE IF NOT EXISTS checkpoint (id INTEGER PRIMARY KEY CHECK (id = 1), value INTEGER NOT NULL);
    `);
    return db;
  } catch (error) {
    db.close();
    throw error;
  }
}

function prepare(db: Database.Database) {
  return {
    checkpoint: db.prepare('SELECT value FROM checkpoint WHERE id = 1'),
    setCheckpoint: db.prepare('INSERT INTO checkpoint (id, value) VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET value = excluded.value'),
    read: db.prepare('SELECT json FROM views WHERE id = ?'),
    listAll: db.prepare('SELECT id, position, json FROM views WHERE tenant = ? AND position < ? ORDER BY position DESC LIMIT ?'),
    listShown: db.prepare(
      'SELECT id, position, json FROM views WHERE tenant = ? AND position < ? AND shown = 1 ORDER BY position DESC LIMIT ?',
    ),
    anyBelow: db.prepare('SELECT 1 FROM views WHERE tenant = ? AND position < ? LIMIT 1'),
    countByStatus: db.prepare('SELECT status, count(*) AS n FROM views GROUP BY status'),
    lines: db.prepare('SELECT json FROM lines ORDER BY rowid'),
    // The row's position is its TaskCreated's, set once: an update keeps it.
    upsertView: db.prepare(
      `INSERT INTO views (id, tenant, position, status, shown, json) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (id) DO UPDATE SET status = excluded.status, shown = excluded.shown, json = excluded.json`,
    ),
    upsertLine: db.prepare('INSERT INTO lines (task_id, json) VALUES (?, ?) ON CONFLICT (task_id) DO UPDATE SET json = excluded.json'),
    deleteLine: db.prepare('DELETE FROM lines WHERE task_id = ?'),
  };
}
