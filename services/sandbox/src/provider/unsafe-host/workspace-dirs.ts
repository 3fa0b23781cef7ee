import { chmod, chown, mkdir, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { ValidationError, isTaskId } from '@app/common';
import { makeDownloadsFolder } from '../../workspace/downloads-folder';
import type { FileOwner } from '../sandbox-provider.port';

/**
 * Where the unsafe-host provider keeps workspaces: plain folders, DATA_DIR/workspaces/<taskId>,
 * 0700 (the bubblewrap provider gives each one a filesystem and a uid of its own instead).
 */
export class WorkspaceDirs {
  private readonly dataDir: string;
  private readonly root: string;

  constructor(dataDir: string) {
    this.dataDir = resolve(dataDir);
    this.root = join(this.dataDir, 'workspaces');
  }

  pathOf(taskId: string): string {
    if (!isTaskId(taskId)) throw new ValidationError(`invalid task id "${taskId}"`);
    return join(this.root, taskId);
  }

  async exists(taskId: string): Promise<boolean> {
    return stat(this.pathOf(taskId)).then(
      (s) => s.isDirectory(),
      () => false,
    );
  }

  async prepareParents(): Promise<void> {
    await mkdir(this.root, { recursive: true, mode: 0o700 });
    await chmod(this.root, 0o700);
  }

  /** Creates the workspace with its `downloads/` if missing, owned by `owner` (when ownership matters), and returns its path. */
  async create(taskId: string, owner?: FileOwner): Promise<string> {
    const dir = this.pathOf(taskId);
    if (await this.exists(taskId)) return dir;
    if (owner) await this.prepareParents();
    await mkdir(dir, { recursive: true, mode: 0o700 });
    if (owner) await chown(dir, owner.uid, owner.gid);
    await makeDownloadsFolder(dir, owner);
    return dir;
  }
}
