import { Logger } from '@nestjs/common';
import { runWithLogContext } from '@app/common';
import type { CoordinationStore } from '@app/coordination';
import type { SandboxLease } from '@app/contracts';
import { parseSandboxLease as parse, sandboxLeaseGivenUpAt, sandboxLeaseKey as keyOf } from '@app/contracts';

export type LeaseOutcome = { readonly held: true } | { readonly held: false; readonly owner: string; readonly expiresAt: number };

/** Past this many lost compare-and-set rounds in a row, something is wrong: say so instead of spinning. */
const MAX_ROUNDS = 20;

/**
 * One sandbox instance per task: a lease in the coordination store (NATS JetStream KV in the
 * distributed mode), `{owner, expiresAt}` under the task's id, written only by compare-and-set.
 * The holder pushes `expiresAt` forward on every use and every TTL/3 while it keeps the
 * workspace; another instance takes the lease only once it has run out, so a crashed holder
 * costs at most one TTL. Fencing: the write before each command is a compare-and-set on the
 * revision this instance last wrote; if anything else wrote in between, this instance no longer
 * holds the task and does not run the command. A holder that cannot renew in time (cut off from
 * NATS) gives the task up itself before its lease runs out (`onLost`), so its commands are
 * stopped before another instance can start any.
 */
export class SandboxLeases {
  private readonly logger = new Logger('SandboxLeases');
  private readonly held = new Map<string, { revision: number; expiresAt: number }>();
  private renewTimer?: NodeJS.Timeout;

  constructor(
    private readonly store: CoordinationStore,
    readonly instanceId: string,
    readonly ttlMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Takes the task's lease, or renews it when this instance holds it; else says who does and until when. */
  async acquire(taskId: string): Promise<LeaseOutcome> {
    const key = keyOf(taskId);
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const mine = (): string => this.leaseValue();
      const current = await this.store.get(key);
      if (!current) {
        const revision = await this.store.create(key, mine());
        if (revision !== undefined) return this.took(taskId, revision);
        continue;
      }
      const lease = parse(current.value);
      // Only this instance writes its own id, so a lease naming it is its own, whatever the revision.
      if (lease.owner === this.instanceId || lease.expiresAt <= this.now()) {
        const revision = await this.store.update(key, mine(), current.revision);
        if (revision !== undefined) return this.took(taskId, revision);
        continue;
      }
      this.held.delete(taskId);
      return { held: false, owner: lease.owner, expiresAt: lease.expiresAt };
    }
    throw new Error(`the lease on ${taskId}'s sandbox kept changing hands (${MAX_ROUNDS} rounds)`);
  }

  holds(taskId: string): boolean {
    return this.held.has(taskId);
  }

  /** Gives the task up (its workspace was archived, or this instance is stopping). */
  async release(taskId: string): Promise<void> {
    const mine = this.held.get(taskId);
    this.held.delete(taskId);
    if (mine) await this.store.delete(keyOf(taskId), mine.revision).catch(() => false);
  }

  /** Renews every lease this instance holds every TTL/3; `onLost` hears of each it could not keep. */
  startRenewing(onLost: (taskId: string) => void): void {
    const tick = async () => {
      for (const taskId of [...this.held.keys()]) await runWithLogContext({ taskId }, () => this.renew(taskId, onLost));
      this.renewTimer = setTimeout(() => void tick(), Math.max(50, Math.floor(this.ttlMs / 3)));
      this.renewTimer.unref();
    };
    this.renewTimer = setTimeout(() => void tick(), Math.max(50, Math.floor(this.ttlMs / 3)));
    this.renewTimer.unref();
  }

  async stop(): Promise<void> {
    clearTimeout(this.renewTimer);
    await Promise.all([...this.held.keys()].map((taskId) => this.release(taskId)));
  }

  private async renew(taskId: string, onLost: (taskId: string) => void): Promise<void> {
    const mine = this.held.get(taskId);
    if (!mine) return;
    const value = this.leaseValue();
    const revision = await this.store.update(keyOf(taskId), value, mine.revision).catch((error: unknown) => {
      this.logger.warn(`lease on ${taskId} not renewed yet: ${error instanceof Error ? error.message : String(error)}`);
      return null;
    });
    if (typeof revision === 'number') {
      this.held.set(taskId, { revision, expiresAt: this.now() + this.ttlMs });
      return;
    }
    // A command's acquire renewed it while this round's write was on its way: the revision moved
    // by this instance's own write, which is no loss (and the lease runs from that write).
    const now = this.held.get(taskId);
    if (revision === undefined && now !== undefined && now.revision !== mine.revision) return;
    // Taken by another instance, or not renewable before it runs out: give the task up now, at the
    // moment an orchestrator watching the lease counts this holder as gone too.
    const givenUpAt = sandboxLeaseGivenUpAt({ owner: this.instanceId, expiresAt: mine.expiresAt, ttlMs: this.ttlMs });
    if (revision === undefined || this.now() >= givenUpAt) {
      this.held.delete(taskId);
      this.logger.warn(`lost the lease on ${taskId}'s sandbox; its running commands are stopped`);
      onLost(taskId);
    }
  }

  /** This instance's lease from now; its TTL in it, so a reader can tell when it counts as gone (sandboxLeaseGivenUpAt). */
  private leaseValue(): string {
    return JSON.stringify({ owner: this.instanceId, expiresAt: this.now() + this.ttlMs, ttlMs: this.ttlMs } satisfies SandboxLease);
  }

  private took(taskId: string, revision: number): LeaseOutcome {
    this.held.set(taskId, { revision, expiresAt: this.now() + this.ttlMs });
    return { held: true };
  }
}
