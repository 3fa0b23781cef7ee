import { Logger } from '@nestjs/common';
import { readdir } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import type { ObjectStore } from '@app/object-store';
import { TaskCommandExecutor } from '@app/task-commands';
import { SandboxProvider } from '../provider/sandbox-provider.port';
import { TaskLocks } from './task-locks';

export interface SessionLimits {
  /** A sandbox unused this long is snapshotted and torn down (SANDBOX_IDLE_TTL_MS). */
  readonly idleTtlMs: number;
  readonly snapshotMaxBytes: number;
  readonly snapshotTimeoutMs: number;
}

const TASK_ID = /^task_[a-f0-9]{32}$/;

/** The workspace could not be brought back from its snapshot; the tool call reports this. */
export class SandboxRestoreError extends Error {}

/**
 * The life of each task's sandbox: created on first use, snapshotted into the object store and
 * torn down when idle, restored transparently on the next use (on whichever instance gets it:
 * the snapshot key is in the task's events). Every operation on one sandbox runs alone.
 */
export class SandboxSessions {
  private readonly logger = new Logger('SandboxSessions');
  private readonly locks = new TaskLocks();
  private readonly lastUsed = new Map<string, number>();

  constructor(
    private readonly provider: SandboxProvider,
    private readonly objects: ObjectStore,
    private readonly commands: TaskCommandExecutor,
    private readonly workspacesDir: string,
    private readonly limits: SessionLimits,
  ) {}

  /** Runs `body` with the task's workspace ready, as the only operation on that sandbox. */
  use<T>(taskId: string, body: (workspaceRoot: string) => Promise<T>): Promise<T> {
    return this.locks.run(taskId, async () => {
      this.lastUsed.set(taskId, Date.now());
      try {
        return await body(await this.ready(taskId));
      } finally {
        this.lastUsed.set(taskId, Date.now());
      }
    });
  }

  /** Snapshots and tears down every sandbox idle for at least the TTL; returns the expired task ids. */
  async expireIdle(now = Date.now()): Promise<string[]> {
    const names = await readdir(this.workspacesDir).catch(() => [] as string[]);
    const expired: string[] = [];
    for (const taskId of names.filter((n) => TASK_ID.test(n))) {
      // First sight (e.g. after a restart): count idleness from now, never from a guess.
      if (!this.lastUsed.has(taskId)) this.lastUsed.set(taskId, now);
      const idleMs = now - (this.lastUsed.get(taskId) ?? now);
      if (idleMs < this.limits.idleTtlMs || this.locks.isBusy(taskId)) continue;
      const done = await this.locks.run(taskId, () => this.expire(taskId, idleMs)).catch((error: unknown) => {
        this.logger.error(`sandbox of ${taskId} could not be snapshotted; it stays up and is tried again later: ${messageOf(error)}`);
        this.lastUsed.set(taskId, Date.now());
        return false;
      });
      if (done) expired.push(taskId);
    }
    return expired;
  }

  private async ready(taskId: string): Promise<string> {
    const { state } = await this.commands.load(taskId);
    const snapshotKey = state.exists ? state.expiredSnapshotKey : undefined;
    if (await this.provider.exists(taskId)) {
      // A crash between recording the expiry and the teardown left the workspace: it is current.
      if (snapshotKey) await this.recordRestored(taskId, snapshotKey, 0);
      return this.provider.workspacePath(taskId);
    }
    if (!snapshotKey) return this.provider.create(taskId);
    const startedAt = Date.now();
    try {
      const archive = await this.objects.get(snapshotKey);
      await this.provider.restore(taskId, archive, { maxBytes: this.limits.snapshotMaxBytes, timeoutMs: this.limits.snapshotTimeoutMs });
    } catch (error) {
      throw new SandboxRestoreError(`the workspace could not be restored from its snapshot: ${messageOf(error)}`);
    }
    await this.recordRestored(taskId, snapshotKey, Date.now() - startedAt);
    return this.provider.workspacePath(taskId);
  }

  private async expire(taskId: string, idleMs: number): Promise<boolean> {
    if (!(await this.provider.exists(taskId))) return false;
    const { state } = await this.commands.load(taskId);
    if (!state.exists) {
      // Left by a create that failed after its uploads were placed: nothing refers to it.
      await this.provider.destroy(taskId);
      this.lastUsed.delete(taskId);
      return false;
    }
    if (!state.expiredSnapshotKey) {
      const snapshotKey = `snapshots/${taskId}/${Date.now()}-${randomBytes(4).toString('hex')}.tar`;
      const archive = this.provider.snapshot(taskId, { maxBytes: this.limits.snapshotMaxBytes, timeoutMs: this.limits.snapshotTimeoutMs });
      const { size } = await this.objects.put(snapshotKey, archive, { contentType: 'application/x-tar', maxBytes: this.limits.snapshotMaxBytes });
      try {
        await this.commands.execute(taskId, { type: 'RecordSandboxExpired', data: { snapshotKey, sizeBytes: size, idleMs } }, { retries: 5 });
      } catch (error) {
        await this.objects.delete(snapshotKey).catch(() => undefined);
        throw error;
      }
    }
    await this.provider.destroy(taskId);
    this.lastUsed.delete(taskId);
    this.logger.log(`sandbox of ${taskId} expired after ${idleMs} ms idle`);
    return true;
  }

  private async recordRestored(taskId: string, snapshotKey: string, durationMs: number): Promise<void> {
    await this.commands.execute(taskId, { type: 'RecordSandboxRestored', data: { snapshotKey, durationMs } }, { retries: 5 });
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
