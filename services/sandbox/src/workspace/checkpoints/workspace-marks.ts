import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { CheckpointRef } from '@app/task-domain';

/** The checkpoint a workspace on this disk was at when it was last checkpointed or restored here. */
export interface WorkspaceMark {
  readonly seq: number;
  readonly root: string;
}

/**
 * Which checkpoint each workspace on this disk was last at, kept beside the workspaces (in a
 * folder no task id can name, outside every workspace: no task reaches it). An instance that
 * finds a task's workspace on its disk after another instance held the task (it was lost, then
 * came back; the task was handed over and back) must not take that old copy for the current one.
 *
 * Not flushed to disk: a mark lost or older after a crash makes the workspace count as current
 * (as before marks) or come back from the last checkpoint, which holds what the history says.
 */
export class WorkspaceMarks {
  constructor(private readonly dir: string) {}

  async read(taskId: string): Promise<WorkspaceMark | undefined> {
    try {
      const mark = JSON.parse(await readFile(this.pathOf(taskId), 'utf8')) as Partial<WorkspaceMark>;
      return typeof mark.seq === 'number' && typeof mark.root === 'string' ? { seq: mark.seq, root: mark.root } : undefined;
    } catch {
      return undefined;
    }
  }

  async write(taskId: string, ref: CheckpointRef): Promise<void> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    const temp = join(this.dir, `.${taskId}.${randomBytes(4).toString('hex')}`);
    await writeFile(temp, JSON.stringify({ seq: ref.seq, root: ref.root.sha256 } satisfies WorkspaceMark), { mode: 0o600 });
    await rename(temp, this.pathOf(taskId));
  }

  async remove(taskId: string): Promise<void> {
    await rm(this.pathOf(taskId), { force: true });
  }

  private pathOf(taskId: string): string {
    return join(this.dir, `${taskId}.json`);
  }
}

/**
 * A workspace is stale when the task's history has gone past the checkpoint it was at: it names
 * a later checkpoint (or another one of the same step) than the mark does. A history behind the
 * mark is a step checkpointed here whose result is not recorded yet (a second tool call of the
 * same answer runs before the first one's result is): that workspace is the newest there is.
 */
export function isStaleWorkspace(mark: WorkspaceMark | undefined, last: CheckpointRef | undefined): boolean {
  if (!mark || !last) return false;
  return last.root.sha256 !== mark.root && last.seq >= mark.seq;
}
