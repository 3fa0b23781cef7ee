import { Logger } from '@nestjs/common';
import { mkdir, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { isTaskId, runWithLogContext } from '@app/common';
import type { Readable } from 'node:stream';
import type { ObjectStore } from '@app/object-store';
import type { CheckpointRef } from '@app/task-domain';
import type { TaskCommandExecutor } from '@app/task-commands';
import type { SandboxProvider } from '../provider/sandbox-provider.port';
import type { SandboxLeases } from './sandbox-leases';
import { SnapshotRetries } from './snapshot-retries';
import { TaskLocks } from './task-locks';

export interface SessionLimits {
  /** A sandbox unused this long is snapshotted and torn down (SANDBOX_IDLE_TTL_MS). */
  readonly idleTtlMs: number;
  readonly snapshotMaxBytes: number;
  readonly snapshotTimeoutMs: number;
  /**
   * Idle snapshots of one task that may fail in a row before a SandboxSnapshotFailed event gives
   * up until the task is used again (SANDBOX_SNAPSHOT_MAX_ATTEMPTS). The retries wait `idleTtlMs`,
   * then twice as long each time.
   */
  readonly snapshotMaxAttempts: number;
}

/** Snapshots taken at once by one sweep: enough that a slow one blocks no other, few enough not to flood the disk. */
const EXPIRY_CONCURRENCY = 4;
/** Left-out entries named in the SandboxExpired event; past this only their number is given. */
const MAX_SKIPPED_NAMED = 20;
/** Characters of the last error kept in the SandboxSnapshotFailed event: tar's stderr can be long. */
const MAX_REASON_CHARS = 1_000;

/** How a session brings a workspace back from the task's last checkpoint, and drops what it knows of one torn down. */
export interface SessionCheckpoints {
  archive(ref: CheckpointRef, signal?: AbortSignal): Readable;
  forget(taskId: string): Promise<void>;
  /** The workspace on this disk is behind the task's history: another instance went on with the task. */
  isStaleOnDisk(taskId: string, last: CheckpointRef | undefined): Promise<boolean>;
  /** The workspace was brought back as `ref` had it. */
  restoredTo(taskId: string, ref: CheckpointRef | undefined): Promise<void>;
}

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
  /** Snapshots under way, stopped when their task is used again. */
  private readonly expiring = new Map<string, AbortController>();
  private readonly retries: SnapshotRetries;
  /** Rolled-back turns each live workspace here has been reset for (kept on disk too: see rollbacksApplied). */
  private readonly applied = new Map<string, number>();

  constructor(
    private readonly provider: SandboxProvider,
    private readonly objects: ObjectStore,
    private readonly commands: TaskCommandExecutor,
    private readonly workspacesDir: string,
    private readonly limits: SessionLimits,
    /** Masks the task's secrets in text taken from its workspace (names of skipped files). */
    private readonly redact: (taskId: string, text: string) => string = (_taskId, text) => text,
    /** Which instance holds which task; absent: this instance holds every task it sees. */
    private readonly leases?: SandboxLeases,
    /** Absent: a workspace that is gone with no snapshot starts empty (as before checkpoints). */
    private readonly checkpoints?: SessionCheckpoints,
  ) {
    // The first retry comes one TTL after the failure, as a sandbox used then left idle would.
    this.retries = new SnapshotRetries(limits.snapshotMaxAttempts, limits.idleTtlMs);
  }

  /** Sandboxes this instance holds: used since it started, or found on disk by the expiry sweep, and not expired. */
  get liveCount(): number {
    return this.lastUsed.size;
  }

  /**
   * Runs `body` with the task's workspace ready, as the only operation on that sandbox. A
   * snapshot of it under way is stopped first: the task is not idle any more, and its next idle
   * spell may try snapshots afresh.
   */
  use<T>(taskId: string, body: (workspaceRoot: string) => Promise<T>): Promise<T> {
    this.lastUsed.set(taskId, Date.now());
    this.expiring.get(taskId)?.abort();
    this.retries.forget(taskId);
    return this.locks.run(taskId, async () => {
      this.lastUsed.set(taskId, Date.now());
      try {
        return await body(await this.ready(taskId));
      } finally {
        this.lastUsed.set(taskId, Date.now());
      }
    });
  }

  /**
   * Snapshots and tears down every sandbox idle for at least the TTL, a few at a time, each
   * bounded by SANDBOX_SNAPSHOT_TIMEOUT_MS: a slow one holds up no other, and a tool call for
   * it stops its snapshot at once. A task whose snapshot failed waits out its backoff, and after
   * SANDBOX_SNAPSHOT_MAX_ATTEMPTS failures is left up until used again. Returns the expired task ids.
   */
  async expireIdle(now = Date.now()): Promise<string[]> {
    const names = await readdir(this.workspacesDir).catch(() => [] as string[]);
    const due: { taskId: string; idleMs: number }[] = [];
    for (const taskId of names.filter(isTaskId)) {
      // First sight (e.g. after a restart): count idleness from now, never from a guess.
      if (!this.lastUsed.has(taskId)) this.lastUsed.set(taskId, now);
      const idleMs = now - (this.lastUsed.get(taskId) ?? now);
      if (idleMs < this.limits.idleTtlMs || this.locks.isBusy(taskId) || this.expiring.has(taskId)) continue;
      if (!this.retries.mayTry(taskId, now)) continue;
      due.push({ taskId, idleMs });
    }
    const expired: string[] = [];
    await inBatches(due, EXPIRY_CONCURRENCY, ({ taskId, idleMs }) =>
      runWithLogContext({ taskId }, async () => {
        if (await this.expireOne(taskId, idleMs, now)) expired.push(taskId);
      }),
    );
    return expired;
  }

  private async expireOne(taskId: string, idleMs: number, now: number): Promise<boolean> {
    const controller = new AbortController();
    this.expiring.set(taskId, controller);
    try {
      // Another instance's sandbox (a shared volume): only its holder archives it.
      if (this.leases && !(await this.leases.acquire(taskId)).held) return false;
      const expired = await this.locks.run(taskId, async () =>
        controller.signal.aborted ? false : this.expire(taskId, idleMs, controller.signal),
      );
      if (expired) await this.leases?.release(taskId);
      return expired;
    } catch (error) {
      // Stopped by a tool call: no failure, and that call gave the task its whole budget back.
      if (controller.signal.aborted) this.logger.log(`snapshot of ${taskId} stopped: the sandbox is in use again`);
      else await this.snapshotFailed(taskId, error, now);
      return false;
    } finally {
      this.expiring.delete(taskId);
    }
  }

  /**
   * Counts a failed attempt; after the last one the task's history says why, how many, and that
   * the workspace is kept as it is (neither archived nor removed), and no more are tried until
   * the task is used again.
   */
  private async snapshotFailed(taskId: string, error: unknown, now: number): Promise<void> {
    // Masked before it is cut, so no part of a secret outlives the cut.
    const reason = truncate(this.redact(taskId, messageOf(error)), MAX_REASON_CHARS);
    const { attempts, retryInMs } = this.retries.failed(taskId, now);
    const max = this.retries.maxAttempts;
    if (retryInMs !== undefined) {
      this.logger.warn(
        `sandbox of ${taskId} could not be snapshotted (attempt ${attempts} of ${max}); it stays up and is tried again in ${retryInMs} ms: ${reason}`,
      );
      return;
    }
    this.logger.error(
      `sandbox of ${taskId} could not be snapshotted in ${attempts} attempt${attempts === 1 ? '' : 's'}; it stays up as it is, with no more snapshots until it is used again: ${reason}`,
    );
    try {
      const data = { reason, attempts, kept: 'workspace' as const };
      await this.commands.execute(taskId, { type: 'RecordSandboxSnapshotFailed', data }, { retries: 5 });
    } catch (recordError) {
      this.logger.error(this.redact(taskId, `the failed snapshot of ${taskId} could not be recorded: ${messageOf(recordError)}`));
    }
  }

  /**
   * A turn rolled back since this workspace was last made ready (TurnRolledBack): the live
   * workspace holds what that turn did, so it is thrown away and comes back, like a lost one,
   * from the task's last checkpoint, which is by now the one in effect at the turn's start. The
   * call of the interrupted turn that was still running has ended by then: this runs under the
   * task's lock, after it.
   */
  private async ready(taskId: string): Promise<string> {
    const { state } = await this.commands.load(taskId);
    const rollbacks = state.exists ? (state.rollbacks ?? 0) : 0;
    if (rollbacks > 0 && (await this.rollbacksApplied(taskId)) < rollbacks && (await this.provider.exists(taskId))) {
      await this.provider.destroy(taskId);
      await this.checkpoints?.forget(taskId);
      this.logger.log(`workspace of ${taskId} thrown away: a turn was rolled back; it comes back from the checkpoint of that turn's start`);
    }
    const root = await this.readyAsRecorded(taskId, state);
    if (rollbacks > 0) await this.markRollbacksApplied(taskId, rollbacks);
    return root;
  }

  private rollbackMarker(taskId: string): string {
    return join(this.workspacesDir, '.rollbacks', taskId);
  }

  /** On disk beside the workspaces (never inside one, where a command could write it), so a restart does not reset a workspace twice. */
  private async rollbacksApplied(taskId: string): Promise<number> {
    const known = this.applied.get(taskId);
    if (known !== undefined) return known;
    const text = await readFile(this.rollbackMarker(taskId), 'utf8').catch(() => '0');
    const count = Number.parseInt(text, 10) || 0;
    this.applied.set(taskId, count);
    return count;
  }

  private async markRollbacksApplied(taskId: string, count: number): Promise<void> {
    if (this.applied.get(taskId) === count) return;
    await mkdir(join(this.workspacesDir, '.rollbacks'), { recursive: true });
    await writeFile(this.rollbackMarker(taskId), String(count));
    this.applied.set(taskId, count);
  }

  private async readyAsRecorded(taskId: string, state: Awaited<ReturnType<TaskCommandExecutor['load']>>['state']): Promise<string> {
    const snapshotKey = state.exists ? state.expiredSnapshotKey : undefined;
    const last = state.exists ? state.lastCheckpoint : undefined;
    if (await this.provider.exists(taskId)) {
      // A crash between recording the expiry and the teardown left the workspace: it is current.
      if (snapshotKey) await this.recordRestored(taskId, snapshotKey, 0);
      else if (await this.checkpoints?.isStaleOnDisk(taskId, last)) {
        // Left here when the task moved to another instance, which went on with it: that copy is old.
        this.logger.warn(`the workspace of ${taskId} on this disk is older than its history: it comes back from checkpoint ${last!.seq}`);
        await this.provider.destroy(taskId);
        await this.restoreCheckpoint(taskId, last!);
      }
      return this.provider.create(taskId);
    }
    if (!snapshotKey) {
      if (last) await this.restoreCheckpoint(taskId, last);
      return this.provider.create(taskId);
    }
    const startedAt = Date.now();
    try {
      const archive = await this.objects.get(snapshotKey);
      await this.provider.restore(taskId, archive, { maxBytes: this.limits.snapshotMaxBytes, timeoutMs: this.limits.snapshotTimeoutMs });
    } catch (error) {
      throw new SandboxRestoreError(`the workspace could not be restored from its snapshot: ${messageOf(error)}`);
    }
    await this.recordRestored(taskId, snapshotKey, Date.now() - startedAt);
    // Taken when the task was idle: as its last checkpoint left it (or later, by a step too big to checkpoint).
    await this.checkpoints?.restoredTo(taskId, last);
    return this.provider.create(taskId);
  }

  /**
   * The workspace is gone with no snapshot of it (its instance was lost, a restart lost the
   * disk, a fork's first use): it comes back as the last tool call that changed it left it.
   */
  private async restoreCheckpoint(taskId: string, last: CheckpointRef): Promise<void> {
    if (!this.checkpoints) return;
    const startedAt = Date.now();
    const bounds = { maxBytes: this.limits.snapshotMaxBytes, timeoutMs: this.limits.snapshotTimeoutMs };
    try {
      await this.provider.restore(taskId, this.checkpoints.archive(last), bounds);
    } catch (error) {
      throw new SandboxRestoreError(`the workspace could not be restored from its last checkpoint: ${messageOf(error)}`);
    }
    await this.checkpoints.restoredTo(taskId, last);
    this.logger.log(
      `workspace of ${taskId} restored from its checkpoint ${last.seq} (${last.files} files) in ${Date.now() - startedAt} ms`,
    );
  }

  private async expire(taskId: string, idleMs: number, signal: AbortSignal): Promise<boolean> {
    if (!(await this.provider.exists(taskId))) return false;
    const { state } = await this.commands.load(taskId);
    if (!state.exists) {
      // Left by a create that failed after its uploads were placed: nothing refers to it.
      await this.provider.destroy(taskId);
      this.lastUsed.delete(taskId);
      this.retries.forget(taskId);
      return false;
    }
    const staleByRollback = (state.rollbacks ?? 0) > (await this.rollbacksApplied(taskId));
    if (!state.expiredSnapshotKey && staleByRollback) {
      // What a rolled-back turn left: never archived. Its next use brings back the last checkpoint.
      await this.provider.destroy(taskId);
      await this.checkpoints?.forget(taskId);
      await this.markRollbacksApplied(taskId, state.rollbacks ?? 0);
      this.lastUsed.delete(taskId);
      this.retries.forget(taskId);
      return false;
    }
    if (!state.expiredSnapshotKey) {
      const snapshotKey = `snapshots/${taskId}/${Date.now()}-${randomBytes(4).toString('hex')}.tar`;
      const skipped = new SkippedEntries((text) => this.redact(taskId, text));
      const { maxBytes, timeoutMs } = { maxBytes: this.limits.snapshotMaxBytes, timeoutMs: this.limits.snapshotTimeoutMs };
      const archive = this.provider.snapshot(taskId, { maxBytes, timeoutMs, signal, onSkipped: skipped.add });
      const { size } = await this.objects.put(snapshotKey, archive, { contentType: 'application/x-tar', maxBytes });
      try {
        signal.throwIfAborted();
        const data = { snapshotKey, sizeBytes: size, idleMs, ...(skipped.count > 0 ? { skipped: skipped.list() } : {}) };
        await this.commands.execute(taskId, { type: 'RecordSandboxExpired', data }, { retries: 5 });
      } catch (error) {
        await this.objects.delete(snapshotKey).catch(() => undefined);
        throw error;
      }
      if (skipped.count > 0) this.logger.warn(`snapshot of ${taskId} left out ${skipped.count} entries: ${skipped.list().join('; ')}`);
    }
    await this.provider.destroy(taskId);
    await this.checkpoints?.forget(taskId);
    this.lastUsed.delete(taskId);
    this.retries.forget(taskId);
    this.applied.delete(taskId);
    await rm(this.rollbackMarker(taskId), { force: true });
    this.logger.log(`sandbox of ${taskId} expired after ${idleMs} ms idle`);
    return true;
  }

  private async recordRestored(taskId: string, snapshotKey: string, durationMs: number): Promise<void> {
    await this.commands.execute(taskId, { type: 'RecordSandboxRestored', data: { snapshotKey, durationMs } }, { retries: 5 });
  }
}

/** Entries a snapshot left out, named (masked) up to a bound. */
class SkippedEntries {
  count = 0;
  private readonly named: string[] = [];

  constructor(private readonly redact: (text: string) => string) {}

  readonly add = (path: string, why: string): void => {
    this.count++;
    if (this.named.length < MAX_SKIPPED_NAMED) this.named.push(this.redact(`${path}: ${why}`));
  };

  list(): string[] {
    const rest = this.count - this.named.length;
    return rest > 0 ? [...this.named, `… and ${rest} more`] : [...this.named];
  }
}

/** Runs `work` on every item, at most `size` at a time. */
async function inBatches<T>(items: readonly T[], size: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < items.length) await work(items[next++]);
  };
  await Promise.all(Array.from({ length: Math.min(size, items.length) }, lane));
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function truncate(text: string, maxChars: number): string {
  return text.length <= maxChars ? text : `${text.slice(0, maxChars - 1)}…`;
}
