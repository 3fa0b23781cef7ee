import { taskIdOf } from '@app/common';
import type { EventStore, StoredEvent } from '@app/event-store';
import { toTaskEvent } from '@app/task-domain';
import { TaskWebhookOutbox, mayMakeWebhookDue, readTaskWebhookOutbox, taskIdOfWebhookStream } from '@app/webhooks';

/**
 * Tasks whose outbox is kept in memory, the least recently touched dropped first. A dropped one
 * costs only a read of its two streams when one of its events next makes a message due; a burst of
 * tasks finishing together is served without any read while it fits.
 */
const KEPT_OUTBOXES = 2_000;

/** What a batch of the feed did to the kept outboxes: each task once, with the global position of its first change. */
export interface FeedApplied {
  /** Kept outboxes the batch changed: they are up to date. */
  readonly changed: ReadonlyMap<string, { readonly outbox: TaskWebhookOutbox; readonly position: number }>;
  /** Tasks to read from the store (load): not kept, or kept and found out of step. */
  readonly toRead: Map<string, number>;
}

/**
 * The dispatcher's webhook outboxes, by task, kept up to date from the store's feed (each event
 * applied once, in order), so that a message made due by a task this process saw created costs no
 * read (task-webhook-outbox.ts). A cache only: what is kept is always what a read of the store up to
 * the event last applied would give.
 */
export class KeptOutboxes {
  /** Least recently touched first. */
  private readonly outboxes = new Map<string, TaskWebhookOutbox>();

  constructor(private readonly store: EventStore) {}

  get(taskId: string): TaskWebhookOutbox | undefined {
    return this.outboxes.get(taskId);
  }

  /**
   * Applies `events` (in global order). A task whose outbox is not kept must be read from the
   * store only when one of its events may make a message due or records a delivery; its
   * TaskCreated starts a kept outbox without any read. A kept outbox that sees a gap in a stream's
   * revisions is dropped and read again (task-webhook-outbox.spec.ts).
   */
  applyFeed(events: readonly StoredEvent[]): FeedApplied {
    const firstChange = new Map<string, number>();
    const toRead = new Map<string, number>();
    for (const e of events) {
      const taskId = taskIdOf(e.streamId);
      const id = taskId ?? taskIdOfWebhookStream(e.streamId);
      if (id === undefined || toRead.has(id)) continue;
      const kept = this.outboxes.get(id);
      if (kept) {
        const outcome = kept.apply(e);
        this.touch(id, kept);
        if (outcome === 'changed' && !firstChange.has(id)) firstChange.set(id, e.globalPosition);
        if (outcome !== 'gap') continue;
        // Not the store's any more: read it whole, from the first change this pass saw.
        this.outboxes.delete(id);
        toRead.set(id, firstChange.get(id) ?? e.globalPosition);
        firstChange.delete(id);
      } else if (taskId !== undefined && e.revision === 1) {
        const outbox = new TaskWebhookOutbox(id);
        outbox.apply(e);
        this.touch(id, outbox);
      } else if (taskId === undefined || mayMakeWebhookDue(toTaskEvent(e))) {
        toRead.set(id, e.globalPosition);
      }
    }
    const changed = new Map<string, { outbox: TaskWebhookOutbox; position: number }>();
    for (const [taskId, position] of firstChange) {
      const kept = this.outboxes.get(taskId);
      // Dropped meanwhile by a pass over more than KEPT_OUTBOXES tasks: read again.
      if (kept) changed.set(taskId, { outbox: kept, position });
      else toRead.set(taskId, position);
    }
    return { changed, toRead };
  }

  /** Reads a task's outbox from the store and keeps it, unless the feed has meanwhile moved the kept one past the read. */
  async load(taskId: string): Promise<TaskWebhookOutbox> {
    const read = await readTaskWebhookOutbox(this.store, taskId);
    const kept = this.outboxes.get(taskId);
    const newest = kept?.covers(read) ? kept : read;
    this.touch(taskId, newest);
    return newest;
  }

  /**
   * This process's own claim or outcome, applied to the kept outbox from the append's result
   * (before the feed hands it over, which then finds it known): the attempt's next step sees it.
   */
  applyOwn(taskId: string, events: readonly StoredEvent[]): void {
    const kept = this.outboxes.get(taskId);
    if (kept && events.some((e) => kept.apply(e) === 'gap')) this.outboxes.delete(taskId);
  }

  /** Keeps `outbox` as the most recently touched; drops the least recently touched beyond KEPT_OUTBOXES. */
  private touch(taskId: string, outbox: TaskWebhookOutbox): void {
    this.outboxes.delete(taskId);
    this.outboxes.set(taskId, outbox);
    if (this.outboxes.size > KEPT_OUTBOXES) this.outboxes.delete(this.outboxes.keys().next().value!);
  }
}
