import { rm } from 'node:fs/promises';
import { taskIdOf } from '@app/common';
import type { EventStore, StoredEvent } from '@app/event-store';
import type { TaskEvent, TaskView, TurnQueueEntry } from '@app/task-domain';
import { UnreadableTaskEventError, outOfLine, projectTaskView, projectTurnQueue, toTaskEvent, turnQueuePlace } from '@app/task-domain';
import { RecentViews } from './recent-views';
import type { ChangedView } from './task-views-table';
import { TaskViewsTable } from './task-views-table';

export interface TaskListPage {
  readonly tasks: TaskView[];
  readonly nextCursor: string | null;
}

export interface TaskViewsStoreOptions {
  /** The SQLite file the views are saved to (and resumed from on restart); absent: kept in memory, rebuilt at each start. */
  readonly path?: string;
  /** Views kept parsed in memory besides those not saved yet (the rest are read from the table on demand). */
  readonly cachedViews?: number;
  readonly saveIntervalMs?: number;
  /** A checkpoint file of an earlier version (one JSON of every view) to delete at start: the table replaces it. */
  readonly replaces?: string;
}

const PAGE_SIZE = 500;
/** Changed views held in memory before they are saved even if the interval has not passed (a catch-up of many tasks). */
const MAX_UNSAVED_VIEWS = 1000;
const ACTIVE_STATUSES: readonly string[] = ['pending', 'running', 'awaiting_approval'];
/** Bump when TaskView's shape changes: an older checkpoint is then ignored and the views rebuilt from the store. */
export const TASK_VIEW_SNAPSHOT_VERSION = 10;

/**
 * The task views (GET task, task list, pending approvals), projected from the event store and
 * saved to a SQLite table with the position they are at, so a restart catches up from there
 * instead of replaying everything. Deliveries are gap-checked against the global position.
 *
 * Memory stays flat in the number of tasks: only the views changed since the last save (saved
 * every few seconds, in one transaction with the position) and the most recently used ones are
 * held; the others are read back from the table when asked for. What must answer without reading
 * every row is kept up to date as events arrive: the count per status, the active task ids and
 * the queue lines (only tasks with a turn running or waiting).
 *
 * An event it cannot read (toTaskEvent) stops the views just before it, never skipped: from then
 * on start, refresh and waitForPosition fail with that error (a request answers 500 and the
 * error is logged), until a release that reads it runs.
 */
export class TaskViewsStore {
  private table?: TaskViewsTable;
  /** Views changed since the last save, with their TaskCreated position (0 when the table already has the row). */
  private readonly unsaved = new Map<string, ChangedView>();
  private readonly recent: RecentViews<TaskView>;
  /** Each tenant's tasks in line for a turn (running or waiting), by task id. */
  private readonly lines = new Map<string, Map<string, TurnQueueEntry>>();
  /** Queue entries changed since the last save (undefined: left the line). */
  private readonly unsavedLines = new Map<string, TurnQueueEntry | undefined>();
  private readonly statusCounts = new Map<string, number>();
  private readonly active = new Set<string>();
  private checkpoint = 0;
  private savedCheckpoint = 0;
  private saveTimer?: NodeJS.Timeout;
  private queue: Promise<void> = Promise.resolve();
  private unsubscribe?: () => void;
  private queuedRefresh?: Promise<void>;
  private readonly waiters = new Set<{ position: number; resolve: () => void }>();
  /** The event the views stopped at, once one could not be read. */
  private unreadable?: UnreadableTaskEventError;

  constructor(
    private readonly store: EventStore,
    private readonly options: TaskViewsStoreOptions = {},
  ) {
    this.recent = new RecentViews(options.cachedViews ?? 2000);
  }

  async start(): Promise<void> {
    if (this.options.replaces) await rm(this.options.replaces, { force: true });
    this.table = TaskViewsTable.open(this.options.path, TASK_VIEW_SNAPSHOT_VERSION);
    this.restore(this.table);
    // enqueue() catches and reports a failed batch itself; the store's notifier has nothing to wait for.
    this.unsubscribe = this.store.onAppended((events) => void this.enqueue(() => this.applyLive(events)));
    await this.enqueue(() => this.catchUp());
    this.throwIfStopped();
    this.saveTimer = setInterval(() => this.trySave(), this.options.saveIntervalMs ?? 2000);
    this.saveTimer.unref();
  }

  async stop(): Promise<void> {
    this.unsubscribe?.();
    await this.queue;
    clearInterval(this.saveTimer);
    // The table is a cache of the event store: a save that fails costs a longer catch-up at the
    // next start, and must not keep the table (and, after it, the event store) from closing.
    this.trySave();
    this.table?.close();
    this.table = undefined;
  }

  get position(): number {
    return this.checkpoint;
  }

  get(taskId: string): TaskView | undefined {
    const unsaved = this.unsaved.get(taskId);
    if (unsaved) return unsaved.view;
    const recent = this.recent.get(taskId);
    if (recent) return recent;
    const json = this.table?.read(taskId);
    if (json === undefined) return undefined;
    const view = JSON.parse(json) as TaskView;
    this.recent.set(taskId, view);
    return view;
  }

  /**
   * Applies whatever the store holds beyond the checkpoint, now. Another instance's writes reach
   * this one a moment later through the live feed; a read that must see every write committed
   * before it began (read-your-writes across API instances) awaits this first. Callers that
   * arrive while a refresh is still queued share it; one already reading may have missed their
   * writes, so they queue the next.
   */
  async refresh(): Promise<void> {
    this.queuedRefresh ??= this.enqueue(async () => {
      this.queuedRefresh = undefined;
      await this.catchUp();
    });
    await this.queuedRefresh;
    this.throwIfStopped();
  }

  /** Resolves once every event up to `position` is applied: read-your-writes for commands. */
  waitForPosition(position: number, timeoutMs = 5000): Promise<void> {
    if (this.checkpoint >= position) return Promise.resolve();
    if (this.unreadable) return Promise.reject(this.unreadable);
    return new Promise((resolve, reject) => {
      const waiter = { position, resolve: () => (clearTimeout(timer), resolve()) };
      const timer = setTimeout(() => {
        this.waiters.delete(waiter);
        reject(this.unreadable ?? new Error(`read model did not reach position ${position} within ${timeoutMs} ms`));
      }, timeoutMs);
      this.waiters.add(waiter);
    });
  }

  /** The tenant's tasks newest first, `cursor` being the TaskCreated position the previous page ended at. */
  list(tenantId: string, options: { limit: number; cursor?: number; includeHidden: boolean }): TaskListPage {
    if (!this.table) return { tasks: [], nextCursor: null };
    // The table answers the query: it must hold every change applied so far.
    this.save();
    const rows = this.table.listBelow(tenantId, options.cursor ?? Number.MAX_SAFE_INTEGER, options.limit, options.includeHidden);
    const tasks = rows.map((r) => this.recent.get(r.id) ?? (JSON.parse(r.json) as TaskView));
    const last = rows.at(-1);
    // A next page whenever any task (shown or hidden) is older than this page's last.
    const more = last !== undefined && rows.length === options.limit && this.table.hasBelow(tenantId, last.position);
    return { tasks, nextCursor: more ? String(last.position) : null };
  }

  /**
   * The tenant's tasks with a turn running or a message waiting for one, each with its place in
   * line (MAX_RUNNING_TASKS_PER_TENANT); see turn-queue.projection.ts.
   */
  turnQueue(tenantId: string): TurnQueueEntry[] {
    return [...(this.lines.get(tenantId)?.values() ?? [])];
  }

  /** How many tasks have each status (metrics, at scrape time). */
  countByStatus(): Map<string, number> {
    return new Map(this.statusCounts);
  }

  /** Tasks with a turn in progress: what the runner resumes after a restart. */
  activeTaskIds(): string[] {
    return [...this.active];
  }

  private enqueue(work: () => Promise<void>): Promise<void> {
    this.queue = this.queue.then(work).catch((error: unknown) => {
      if (error instanceof UnreadableTaskEventError) this.unreadable ??= error;
      else process.emitWarning(`task views: applying events failed, the next batch or refresh catches up: ${(error as Error).message}`);
      // Whatever was applied before the failure still counts for those waiting on it.
      this.release();
    });
    return this.queue;
  }

  private throwIfStopped(): void {
    if (this.unreadable) throw this.unreadable;
  }

  private async catchUp(): Promise<void> {
    for (;;) {
      const events = await this.store.readAll({ after: this.checkpoint, maxCount: PAGE_SIZE });
      events.forEach((e) => this.apply(e));
      if (events.length < PAGE_SIZE) break;
    }
    this.release();
  }

  private async applyLive(events: readonly StoredEvent[]): Promise<void> {
    if (events.length === 0 || events[events.length - 1].globalPosition <= this.checkpoint) return;
    // A batch that does not start right after the checkpoint means something was missed.
    if (events[0].globalPosition > this.checkpoint + 1) return this.catchUp();
    events.filter((e) => e.globalPosition > this.checkpoint).forEach((e) => this.apply(e));
    this.release();
  }

  private apply(stored: StoredEvent): void {
    const taskId = taskIdOf(stored.streamId);
    // Read before the checkpoint moves past it: an unreadable event is never skipped.
    const event = taskId === undefined ? undefined : toTaskEvent(stored);
    this.checkpoint = Math.max(this.checkpoint, stored.globalPosition);
    if (taskId === undefined || event === undefined) return;
    const before = this.get(taskId);
    const after = projectTaskView(before, { event, revision: stored.revision, recordedAt: stored.recordedAt });
    if (!after || after === before) return;
    const created = this.unsaved.get(taskId)?.position ?? (before ? 0 : stored.globalPosition);
    this.unsaved.set(taskId, { view: after, position: created });
    this.countStatus(before, after);
    this.applyToLine(after.tenantId, taskId, event, stored.globalPosition);
    // Between two events the views and the checkpoint match: a safe point to save.
    if (this.unsaved.size >= MAX_UNSAVED_VIEWS) this.trySave();
  }

  private countStatus(before: TaskView | undefined, after: TaskView): void {
    if (before?.status === after.status) return;
    if (before) this.statusCounts.set(before.status, (this.statusCounts.get(before.status) ?? 1) - 1);
    this.statusCounts.set(after.status, (this.statusCounts.get(after.status) ?? 0) + 1);
    if (ACTIVE_STATUSES.includes(after.status)) this.active.add(after.id);
    else this.active.delete(after.id);
  }

  private applyToLine(tenantId: string, taskId: string, event: TaskEvent, position: number): void {
    const line = this.lines.get(tenantId) ?? new Map<string, TurnQueueEntry>();
    const before = line.get(taskId);
    const entry = projectTurnQueue(before ?? outOfLine(taskId, tenantId), event, position);
    if (turnQueuePlace(entry) === undefined) line.delete(taskId);
    else line.set(taskId, entry);
    if (line.size > 0) this.lines.set(tenantId, line);
    else this.lines.delete(tenantId);
    if (before || line.has(taskId)) this.unsavedLines.set(taskId, line.get(taskId));
  }

  private release(): void {
    for (const w of this.waiters) {
      if (w.position <= this.checkpoint) {
        this.waiters.delete(w);
        w.resolve();
      }
    }
  }

  /** Writes the changes since the last save, with the checkpoint they are at, in one transaction. */
  private save(): void {
    if (!this.table) return;
    if (this.unsaved.size === 0 && this.unsavedLines.size === 0 && this.checkpoint === this.savedCheckpoint) return;
    this.table.save({ checkpoint: this.checkpoint, views: this.unsaved.values(), lines: this.unsavedLines });
    this.savedCheckpoint = this.checkpoint;
    for (const [id, { view }] of this.unsaved) this.recent.set(id, view);
    this.unsaved.clear();
    this.unsavedLines.clear();
  }

  private trySave(): void {
    try {
      this.save();
    } catch (error) {
      // The changes stay in memory and the next save tries again; a restart meanwhile catches up from the last save.
      process.emitWarning(`task views not saved: ${(error as Error).message}`);
    }
  }

  private restore(table: TaskViewsTable): void {
    this.checkpoint = this.savedCheckpoint = table.checkpoint;
    for (const [status, n] of table.countByStatus()) this.statusCounts.set(status, n);
    for (const id of table.idsWithStatus(ACTIVE_STATUSES)) this.active.add(id);
    for (const entry of table.lines()) {
      this.lines.set(entry.tenantId, (this.lines.get(entry.tenantId) ?? new Map<string, TurnQueueEntry>()).set(entry.taskId, entry));
    }
  }
}
