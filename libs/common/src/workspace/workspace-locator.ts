import { mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { ValidationError } from '../errors/app-error';

const TASK_ID = /^task_[a-f0-9]{32}$/;

/** Where each task's workspace lives: one directory per task under DATA_DIR/workspaces. */
export class WorkspaceLocator {
  private readonly root: string;

  constructor(dataDir: string) {
    this.root = resolve(dataDir, 'workspaces');
  }

  /** The task's workspace directory, created on first use. Task ids are checked before use in a path. */
  async ensure(taskId: string): Promise<string> {
    const dir = this.pathOf(taskId);
    await mkdir(dir, { recursive: true });
    return dir;
  }

  pathOf(taskId: string): string {
    if (!TASK_ID.test(taskId)) throw new ValidationError(`invalid task id "${taskId}"`);
    return join(this.root, taskId);
  }
}
