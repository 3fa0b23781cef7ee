import { Logger } from '@nestjs/common';
import type { Readable } from 'node:stream';
import type { CheckpointReader } from '@app/checkpoints';
import { checkpointArchive } from '@app/checkpoints';
import type { ObjectStore } from '@app/object-store';
import type { CheckpointRef, WorkspaceChange } from '@app/task-domain';
import type { Baseline } from './baseline';
import type { ChangeHints } from './change-hints';
import { NO_CHANGE_HINTS } from './change-hints';
import { baselineOf } from './baseline';
import type { OnSkipped } from '../snapshot-entries';
import { CheckpointTooLargeError, writeCheckpoint } from './checkpoint-writer';
import type { WorkspaceMarks } from './workspace-marks';
import { isStaleWorkspace } from './workspace-marks';

/** What a step's checkpoint gives its tool_result. */
export type StepCheckpoint =
  | {
      readonly checkpoint?: CheckpointRef;
      readonly changes: readonly WorkspaceChange[];
      readonly changesTruncated: boolean;
    }
  | { readonly skipped: string };

/**
 * Each task's checkpoints on this instance: the baseline of the last one it wrote is kept in
 * memory, and trusted only while it is the one the task's events name last (a restart, another
 * instance, a fork or a call whose result was never recorded reads the recorded one instead).
 */
export class TaskCheckpoints {
  private readonly logger = new Logger('Checkpoints');
  private readonly baselines = new Map<string, Baseline>();

  constructor(
    private readonly objects: ObjectStore,
    private readonly reader: CheckpointReader,
    /** Bytes one checkpoint may add (SANDBOX_SNAPSHOT_MAX_BYTES). */
    private readonly maxAddedBytes: number,
    /** Which folders each step touched; without it (or when it says 'rescan') every step walks everything. */
    private readonly hints: ChangeHints = NO_CHANGE_HINTS,
    /** Which checkpoint each workspace on this disk is at; without it a workspace found on disk is taken as current. */
    private readonly marks?: WorkspaceMarks,
  ) {}

  /**
   * Checkpoints the workspace after a step. Nothing changed: no new checkpoint. Too large or
   * unreadable: `skipped` says why, and the step goes on (the next one compares against the last
   * checkpoint that was taken).
   */
  async afterStep(taskId: string, workspaceRoot: string, last: CheckpointRef | undefined, onSkipped?: OnSkipped): Promise<StepCheckpoint> {
    try {
      const baseline = await this.baselineFor(taskId, last);
      // Called with the task's lock held and its processes dead (killed with its cgroup after each
      // command), and drained before the walk: whatever changes after this drain is in the next one.
      const drained = await this.hints.drain(taskId);
      // The hints cover what changed since the last drain, which came just before the kept baseline's walk.
      const hints = drained !== 'rescan' && baseline !== undefined && baseline === this.baselines.get(taskId) ? drained : undefined;
      const written = await writeCheckpoint(this.objects, workspaceRoot, baseline, {
        taskId,
        lineage: last?.lineage ?? taskId,
        seq: (last?.seq ?? 0) + 1,
        maxAddedBytes: this.maxAddedBytes,
        onSkipped,
        hints,
      });
      const unchanged = last ? written.ref.root.sha256 === last.root.sha256 : written.baseline.files.size === 0;
      // Kept when it names only what the history names (or is about to): it knows each file's disk
      // state, the one read from the store does not. One that stored pieces no event will name (a
      // big folder's inner nodes a stored baseline did not know) is dropped: garbage collection
      // may take those pieces, and the next checkpoint must not refer to them.
      if (!unchanged || written.packs.length === 0) this.baselines.set(taskId, written.baseline);
      if (unchanged) return { changes: [], changesTruncated: false };
      await this.mark(taskId, written.ref);
      return { checkpoint: written.ref, changes: written.changes, changesTruncated: written.changesTruncated };
    } catch (error) {
      this.baselines.delete(taskId);
      const why = error instanceof CheckpointTooLargeError ? error.message : `the checkpoint failed: ${messageOf(error)}`;
      this.logger.warn(`no checkpoint of ${taskId} after this step: ${why}`);
      return { skipped: why };
    }
  }

  /** The workspace of `ref` as a tar stream, for a restore. */
  archive(ref: CheckpointRef, signal?: AbortSignal): Readable {
    return checkpointArchive(this.reader, ref, signal);
  }

  /** The task's sandbox left this instance (expired, handed over): its baseline is read again when it comes back. */
  async forget(taskId: string): Promise<void> {
    this.baselines.delete(taskId);
    await this.marks?.remove(taskId);
  }

  /** Whether the task's workspace on this disk is behind its history (another instance went on with it). */
  async isStaleOnDisk(taskId: string, last: CheckpointRef | undefined): Promise<boolean> {
    return isStaleWorkspace(await this.marks?.read(taskId), last);
  }

  /** The workspace was brought back as `ref` had it (or from an idle snapshot taken at `ref`). */
  async restoredTo(taskId: string, ref: CheckpointRef | undefined): Promise<void> {
    this.baselines.delete(taskId);
    if (ref) await this.mark(taskId, ref);
    else await this.marks?.remove(taskId);
  }

  /** A mark that could not be written is removed: the workspace then counts as current, as before marks. */
  private async mark(taskId: string, ref: CheckpointRef): Promise<void> {
    try {
      await this.marks?.write(taskId, ref);
    } catch (error) {
      this.logger.warn(`the checkpoint mark of ${taskId} could not be written: ${messageOf(error)}`);
      await this.marks?.remove(taskId).catch(() => undefined);
    }
  }

  private async baselineFor(taskId: string, last: CheckpointRef | undefined): Promise<Baseline | undefined> {
    if (!last) return undefined;
    const kept = this.baselines.get(taskId);
    if (kept?.root.sha256 === last.root.sha256) return kept;
    return baselineOf(this.reader, last);
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
