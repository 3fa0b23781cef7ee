import type { WebhookOutbox } from '@app/webhooks';
import { outboxDeliveryStates } from '@app/webhooks';
import { DueQueue } from './due-queue';

/** A message not yet delivered or failed: when it is due, and where the scan must restart to find it again. */
export interface PendingMessage {
  readonly taskId: string;
  readonly dueAt: number;
  /** Global position of an event that makes a scan from before it derive this message again. */
  readonly foundAt: number;
}

/**
 * The dispatcher's pending messages, each with its due time as the delivery decider's state says
 * (reconcile), queued by that time. The queue holds stale entries too: a message re-timed gets a
 * new entry, and those that no longer stand for a pending message at that time (delivered or
 * failed since, re-timed, or being attempted: re-queued when the attempt ends) are dropped as
 * they come to the top.
 */
export class PendingMessages {
  private readonly pending = new Map<string, PendingMessage>();
  private readonly due = new DueQueue();

  get(id: string): PendingMessage | undefined {
    return this.pending.get(id);
  }

  delete(id: string): void {
    this.pending.delete(id);
  }

  /** Makes the pending messages agree with the task's outbox as read; `foundAt`: the global position of its first change. */
  reconcile(taskId: string, outbox: WebhookOutbox, foundAt: number): void {
    for (const [id, delivery] of outboxDeliveryStates(outbox)) {
      if (delivery.status !== 'pending') {
        this.pending.delete(id);
        continue;
      }
      const known = this.pending.get(id);
      this.set(id, { taskId, dueAt: delivery.dueAt, foundAt: Math.min(known?.foundAt ?? foundAt, foundAt) });
    }
  }

  /** A message still pending is due again at `dueAt` (an attempt that failed to run is tried again then). */
  retryAt(id: string, dueAt: number): void {
    const p = this.pending.get(id);
    if (p) this.set(id, { ...p, dueAt });
  }

  /** Queues a message still pending at its due time again: its entry was used up when its attempt started. */
  requeue(id: string): void {
    const p = this.pending.get(id);
    if (p) this.due.push(id, p.dueAt);
  }

  /** Takes the next message due at `now` that is not `busy`, dropping stale entries on the way; undefined when none is. */
  takeDue(now: number, busy: (id: string) => boolean): { readonly id: string; readonly taskId: string } | undefined {
    for (let top = this.due.peek(); top !== undefined; top = this.due.peek()) {
      const p = this.pending.get(top.id);
      const stands = p !== undefined && p.dueAt === top.dueAt && !busy(top.id);
      if (stands && top.dueAt > now) return undefined;
      this.due.pop();
      if (stands) return { id: top.id, taskId: p.taskId };
    }
    return undefined;
  }

  /** When the earliest queued entry is due (epoch ms), stale or not. */
  nextDueAt(): number | undefined {
    return this.due.peek()?.dueAt;
  }

  /** Where a scan must start to find every message still pending, `scanned` being as far as it has gone. */
  checkpoint(scanned: number): number {
    let position = scanned;
    for (const p of this.pending.values()) position = Math.min(position, p.foundAt - 1);
    return position;
  }

  /** Records a pending message, and queues it by its due time unless it is queued at that time already. */
  private set(id: string, message: PendingMessage): void {
    const known = this.pending.get(id);
    this.pending.set(id, message);
    if (known?.dueAt !== message.dueAt) this.due.push(id, message.dueAt);
  }
}
