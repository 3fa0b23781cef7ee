import { taskIdOf } from '@app/common';
import type { EventStore, StoredEvent } from '@app/event-store';
import {
  TaskEvent,
  TaskView,
  TurnQueueEntry,
  UnreadableTaskEventError,
  outOfLine,
  projectTaskView,
  projectTurnQueue,
  toTaskEvent,
  turnQueuePlace,
} from '@app/task-domain';
import { ProjectionCheckpointFile } from './projection-checkpoint-file';

export interface TaskListPage {
  readonly tasks: TaskView[];
  readonly nextCursor: string | null;
}

interface ListEntry {
  readonly id: string;
  /** Global position of the TaskCreated event: the list's order and its cursor. */
  readonly position: number;
}

const PAGE_SIZE = 500;
/** Bump when TaskView's shape changes: an older checkpoint is then ignored and the views rebuilt from the store. */
export const TASK_VIEW_SNAPSHOT_VERSION = 7;

/**
 * The task views (GET task, task list, pending approvals), projected from the event store into
 * memory and checkpointed to a file, so a restart catches up from the checkpoint instead of
 * replaying everything. Deliveries are gap-checked against the global position.
 *
 * An event it cannot read (toTaskEvent) stops the views just before it, never skipped: from then
 * on start, refresh and waitForPosition fail with that error (a request answers 500 and the
 * error is logged), until a release that reads it runs.
 */
export class TaskViewsStore {
  private readonly views = new Map<string, TaskView>();
  private readonly byTenant = new Map<string, ListEntry[]>();
  /** Each tenant's tasks in line for a turn (running or waiting), by task id. */
  private readonly lines = new Map<string, Map<string, TurnQueueEntry>>();
  private checkpoint = 0;
  private queue: Promise<void> = Promise.resolve();
  private unsubscribe?: () => void;
  private queuedRefresh?: Promise<void>;
  private readonly waiters = new Set<{ position: number; resolve: () => void }>();
  /** The event the views stopped at, once one could not be read. */
  private unreadable?: UnreadableTaskEventError;

  constructor(
    private readonly store: EventStore,
    private readonly checkpointFile?: ProjectionCheckpointFile<SnapshotState>,
  ) {}

  async start(): Promise<void> {
    const snapshot = await this.checkpointFile?.load();
    if (snapshot?.version === TASK_VIEW_SNAPSHOT_VERSION) this.restore(snapshot);
    this.unsubscribe = this.store.onAppended((events) => this.enqueue(() => this.applyLive(events)));
    await this.enqueue(() => this.catchUp());
    this.throwIfStopped();
    this.checkpointFile?.startAutosave(() => this.snapshot());
  }

  async stop(): Promise<void> {
    this.unsubscribe?.();
    await this.queue;
    await this.checkpointFile?.stop(() => this.snapshot());
  }

  get position(): number {
    return this.checkpoint;
  }

  get(taskId: string): TaskView | undefined {
    return this.views.get(taskId);
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

  list(tenantId: string, options: { limit: number; cursor?: number; includeHidden: boolean }): TaskListPage {
    const entries = this.byTenant.get(tenantId) ?? [];
    const tasks: TaskView[] = [];
    let i = options.cursor === undefined ? entries.length - 1 : lastIndexBelow(entries, options.cursor);
    for (; i >= 0 && tasks.length < options.limit; i--) {
      const view = this.views.get(entries[i].id);
      if (view && (options.includeHidden || view.showInHistory)) tasks.push(view);
    }
    const more = i >= 0;
    return { tasks, nextCursor: more && tasks.length > 0 ? String(entries[i + 1].position) : null };
  }

  /**
   * The tenant's tasks with a turn running or a message waiting for one, each with its place in
   * line (MAX_RUNNING_TASKS_PER_TENANT); see turn-queue.projection.ts.
   */
  turnQueue(tenantId: string): TurnQueueEntry[] {
    return [...(this.lines.get(tenantId)?.values() ?? [])];
  }

  /** Tasks with a turn in progress: what the runner resumes after a restart. */
  /** How many tasks have each status (metrics, at scrape time). */
  countByStatus(): Map<string, number> {
    const counts = new Map<string, number>();
    for (const view of this.views.values()) counts.set(view.status, (counts.get(view.status) ?? 0) + 1);
    return counts;
  }

  activeTaskIds(): string[] {
    return [...this.views.values()].filter((v) => ['pending', 'running', 'awaiting_approval'].includes(v.status)).map((v) => v.id);
  }

  private enqueue(work: () => Promise<void>): Promise<void> {
    this.queue = this.queue.then(work).catch((error: unknown) => {
      if (error instanceof UnreadableTaskEventError) this.unreadable ??= error;
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
    const before = this.views.get(taskId);
    const after = projectTaskView(before, { event, revision: stored.revision, recordedAt: stored.recordedAt });
    if (!after || after === before) return;
    this.views.set(taskId, after);
    if (!before) this.addToTenant(after.tenantId, { id: taskId, position: stored.globalPosition });
    this.applyToLine(after.tenantId, taskId, event, stored.globalPosition);
    this.checkpointFile?.markDirty();
  }

  private applyToLine(tenantId: string, taskId: string, event: TaskEvent, position: number): void {
    const line = this.lines.get(tenantId) ?? new Map<string, TurnQueueEntry>();
    const entry = projectTurnQueue(line.get(taskId) ?? outOfLine(taskId, tenantId), event, position);
    if (turnQueuePlace(entry) === undefined) line.delete(taskId);
    else line.set(taskId, entry);
    if (line.size > 0) this.lines.set(tenantId, line);
    else this.lines.delete(tenantId);
  }

  private addToTenant(tenantId: string, entry: ListEntry): void {
    const list = this.byTenant.get(tenantId) ?? [];
    list.push(entry);
    this.byTenant.set(tenantId, list);
  }

  private release(): void {
    for (const w of this.waiters) {
      if (w.position <= this.checkpoint) {
        this.waiters.delete(w);
        w.resolve();
      }
    }
  }

  private snapshot(): SnapshotState {
    const lines = [...this.lines.values()].flatMap((line) => [...line.values()]);
    return {
      version: TASK_VIEW_SNAPSHOT_VERSION,
      checkpoint: this.checkpoint,
      views: [...this.views.values()],
      lists: Object.fromEntries(this.byTenant),
      lines,
    };
  }

  private restore(s: SnapshotState): void {
    this.checkpoint = s.checkpoint;
    for (const v of s.views) this.views.set(v.id, v);
    for (const [tenant, entries] of Object.entries(s.lists)) this.byTenant.set(tenant, entries);
    for (const entry of s.lines) this.lines.set(entry.tenantId, (this.lines.get(entry.tenantId) ?? new Map()).set(entry.taskId, entry));
  }
}

export interface SnapshotState {
  readonly version: number;
  readonly checkpoint: number;
  readonly views: readonly TaskView[];
  readonly lists: Record<string, ListEntry[]>;
  readonly lines: readonly TurnQueueEntry[];
}

/** Index of the last entry whose position is below `position` (entries ascend by position). */
function lastIndexBelow(entries: readonly ListEntry[], position: number): number {
  let lo = 0;
  let hi = entries.length - 1;
  let found = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (entries[mid].position < position) {
      found = mid;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return found;
}
