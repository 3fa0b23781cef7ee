import { chmod, chown, mkdir, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { ValidationError } from '@app/common';
import { FileOwner } from './sandbox-provider.port';

const TASK_ID = /^task_[a-f0-9]{32}$/;

/**
 * Where workspaces live: DATA_DIR/workspaces/<taskId>. DATA_DIR and workspaces/ are 0711
 * (traversable, not listable): the sandbox launcher runs as the task's uid and must reach its own
 * workspace, which is 0700 and owned by that uid, and nothing else.
 */
export class WorkspaceDirs {
  private readonly dataDir: string;
  private readonly root: string;

  constructor(dataDir: string) {
    this.dataDir = resolve(dataDir);
    this.root = join(this.dataDir, 'workspaces');
  }

  pathOf(taskId: string): string {
    if (!TASK_ID.test(taskId)) throw new ValidationError(`invalid task id "${taskId}"`);
    return join(this.root, taskId);
  }

  async exists(taskId: string): Promise<boolean> {
    return stat(this.pathOf(taskId)).then((s) => s.isDirectory(), () => false);
  }

  async prepareParents(): Promise<void> {
    await mkdir(this.root, { recursive: true });
    await chmod(this.dataDir, 0o711);
    await chmod(this.root, 0o711);
  }

  /** Creates the workspace if missing, owned by `owner` (when ownership matters), and returns its path. */
  async create(taskId: string, owner?: FileOwner): Promise<string> {
    const dir = this.pathOf(taskId);
    if (await this.exists(taskId)) return dir;
    if (owner) await this.prepareParents();
    await mkdir(dir, { recursive: true, mode: 0o700 });
    if (owner) await chown(dir, owner.uid, owner.gid);
    return dir;
  }
}
