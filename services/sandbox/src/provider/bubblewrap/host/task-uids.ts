import { randomInt } from 'node:crypto';
import { mkdir, open, readFile, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';

/** A claim younger than this is never taken for stale: its workspace may be being made right now. */
const CLAIM_GRACE_MS = 60_000;

/**
 * Host uids for task sandboxes: one per live workspace, never shared by two live tasks of any
 * tenant on this host, whichever sandbox instance holds them (instances on one host share the
 * claims folder). A uid is what keeps one task's files, signals and processes from another's,
 * so a hash of the task id (which collides) will not do.
 *
 * A claim is a file named by the uid, created with O_EXCL: the kernel arbitrates between
 * instances. It names the workspace it belongs to (its backing image or folder); a claim whose
 * backing is gone (the instance crashed before releasing it, or its DATA_DIR was deleted) is
 * stale and may be taken over once it is older than the grace time.
 */
export class TaskUids {
  constructor(
    private readonly dir: string,
    private readonly base: number,
    private readonly count: number,
  ) {}

  /** A free uid, claimed for the workspace whose backing is `backing`. */
  async claim(backing: string): Promise<number> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    const start = randomInt(this.count);
    for (let i = 0; i < this.count; i++) {
      const uid = this.base + ((start + i) % this.count);
      if (await this.tryClaim(uid, backing)) return uid;
    }
    throw new Error(
      `no free sandbox uid: all ${this.count} uids from ${this.base} (SANDBOX_UID_BASE, SANDBOX_UID_COUNT) belong to live workspaces on this host`,
    );
  }

  /**
   * Claims `uid` for `backing` if it is free or already this workspace's (a workspace mounted
   * again after a restart keeps the uid its files carry). False when a live workspace holds it.
   */
  async reclaim(uid: number, backing: string): Promise<boolean> {
    if (uid < this.base || uid >= this.base + this.count) return false;
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    if ((await this.holderOf(uid)) === backing) return true;
    return this.tryClaim(uid, backing);
  }

  /** Gives `uid` back, if `backing` still holds it. */
  async release(uid: number, backing: string): Promise<void> {
    if ((await this.holderOf(uid)) !== backing) return;
    await unlink(this.pathOf(uid)).catch(ignoreMissing);
  }

  /** Whether a workspace that still exists holds `uid`. */
  async isLive(uid: number): Promise<boolean> {
    const backing = await this.holderOf(uid);
    return backing !== undefined && workspaceExists(backing.trim());
  }

  /** The backing that holds `uid`, if any. */
  async holderOf(uid: number): Promise<string | undefined> {
    return readFile(this.pathOf(uid), 'utf8').catch(() => undefined);
  }

  private async tryClaim(uid: number, backing: string): Promise<boolean> {
    const path = this.pathOf(uid);
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        const handle = await open(path, 'wx', 0o600);
        try {
          await handle.writeFile(backing);
        } finally {
          await handle.close();
        }
        return true;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      }
      if (!(await this.removeIfStale(path))) return false;
    }
    return false;
  }

  /**
   * Removes a claim whose workspace is gone. Checked by inode right before the unlink, so a
   * claim another instance made at the same uid meanwhile is not the one removed.
   */
  private async removeIfStale(path: string): Promise<boolean> {
    const handle = await open(path, 'r').catch(() => undefined);
    if (!handle) return true; // released meanwhile
    try {
      const info = await handle.stat();
      if (Date.now() - info.mtimeMs < CLAIM_GRACE_MS) return false;
      const backing = (await handle.readFile('utf8')).trim();
      if (await workspaceExists(backing)) return false;
      const now = await stat(path).catch(() => undefined);
      if (now?.ino !== info.ino) return now === undefined;
      await unlink(path).catch(ignoreMissing);
      return true;
    } finally {
      await handle.close();
    }
  }

  private pathOf(uid: number): string {
    return join(this.dir, String(uid));
  }
}

/** A workspace's backing, or the scratch one a restore fills, still exists. */
async function workspaceExists(backing: string): Promise<boolean> {
  if (backing === '') return false;
  const exists = (path: string) =>
    stat(path).then(
      () => true,
      () => false,
    );
  return (await exists(backing)) || exists(`${backing}.restoring`);
}

function ignoreMissing(error: NodeJS.ErrnoException): void {
  if (error.code !== 'ENOENT') throw error;
}
