import { createHash } from 'node:crypto';
import { chmod, mkdir, rename, rm, rmdir, stat } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import { ValidationError, isTaskId } from '@app/common';
import type { FileOwner } from '../../sandbox-provider.port';
import { makeDownloadsFolder } from '../../../workspace/downloads-folder';
import { pathExists } from './path-exists';
import { readMountTable } from './mount-table';
import {
  backingFileOf,
  chownTree,
  filesystemUnavailable,
  makeFolder,
  makeImage,
  mountBacking,
  ownerOfMount,
  unmountPoint,
} from './workspace-mounts';
import type { TaskUids } from './task-uids';
import type { ChangeHints } from '../../../workspace/checkpoints/change-hints';
import { NO_CHANGE_HINTS } from '../../../workspace/checkpoints/change-hints';

/**
 * How a workspace is held: `filesystem` is an ext4 image of exactly SANDBOX_DISK_QUOTA_BYTES,
 * mounted through a loop device, so no write of any kind can take more; `folder` is a plain
 * folder of DATA_DIR (where the host has no loop devices), bounded only by the watcher.
 */
export type VolumeKind = 'filesystem' | 'folder';

export interface VolumeSettings {
  readonly dataDir: string;
  /** Host-wide: mount points and uid claims of every sandbox instance on the host (SANDBOX_RUNTIME_DIR). */
  readonly runtimeDir: string;
  readonly quotaBytes: number;
}

/** A workspace ready for use: where it is mounted, and the uid that owns it. */
export interface Volume {
  readonly path: string;
  readonly owner: FileOwner;
}

/**
 * Each task's workspace as its own mount under SANDBOX_RUNTIME_DIR, backed by DATA_DIR/workspaces/<taskId>
 * (an image file, or a folder). The mount point is what bwrap binds at /workspace and what the
 * service's own readers use. It sits outside DATA_DIR, in folders anyone may pass through but
 * not list, because bwrap runs as the task's uid, which could never pass through a private
 * DATA_DIR; the mounted root is the task's own (0700). A mount point exists only while mounted,
 * and an unmounted one is root's: its owner tells whether the workspace is there.
 */
export class WorkspaceVolumes {
  private readonly backings: string;
  private readonly mounts: string;

  constructor(
    private readonly settings: VolumeSettings,
    private readonly uids: TaskUids,
    readonly kind: VolumeKind,
    /** Watches each task's image while mounted (a `folder` has no filesystem of its own to watch). */
    private readonly hints: ChangeHints = NO_CHANGE_HINTS,
  ) {
    this.backings = join(resolve(settings.dataDir), 'workspaces');
    this.mounts = mountsFolder(settings);
  }

  /** Why a per-workspace filesystem cannot be had here, or undefined when it can. */
  static filesystemUnavailable(): Promise<string | undefined> {
    return filesystemUnavailable();
  }

  backingOf(taskId: string): string {
    return join(this.backings, checked(taskId));
  }

  mountPointOf(taskId: string): string {
    return workspaceMountPoint(this.settings, taskId);
  }

  /** Whether the task has a workspace (mounted or not). */
  exists(taskId: string): Promise<boolean> {
    return pathExists(this.backingOf(taskId));
  }

  /** The task's workspace, made (with a newly claimed uid and a `downloads/` folder) or mounted again as needed. */
  async open(taskId: string): Promise<Volume> {
    const backing = this.backingOf(taskId);
    const volume = await this.openAt(backing, this.mountPointOf(taskId), backing, { downloads: true });
    // Watched from here on (again on every open: a no-op once watched); its first drain says "rescan".
    if (this.kind === 'filesystem') await this.hints.watch(taskId, volume.path);
    return volume;
  }

  /**
   * A fresh, empty workspace for a restore to fill, backed by `<backing>.restoring` until it is
   * committed: a crash meanwhile leaves no workspace (the restore runs again), never half of one.
   * Where the task has no workspace (the usual case, after expiry) it is mounted where the
   * workspace will be, so committing it is a rename; beside the task's own otherwise.
   */
  async openScratch(taskId: string): Promise<Volume> {
    await this.dropScratch(taskId);
    const backing = this.backingOf(taskId);
    if (!(await this.exists(taskId))) return this.openAt(`${backing}.restoring`, this.mountPointOf(taskId), backing, { downloads: false });
    // The task's uid: the claim stays the task's (named by its backing) throughout.
    const { uid } = (await this.open(taskId)).owner;
    return this.openAt(`${backing}.restoring`, `${this.mountPointOf(taskId)}.restoring`, backing, { downloads: false, uid });
  }

  /** The filled scratch becomes the task's workspace (replacing the one it had, if any), keeping its uid. */
  async commitScratch(taskId: string): Promise<Volume> {
    const backing = this.backingOf(taskId);
    const scratch = `${backing}.restoring`;
    const beside = `${this.mountPointOf(taskId)}.restoring`;
    if ((await ownerOfMount(beside)) !== undefined) {
      await this.unmount(beside);
      await this.unmount(this.mountPointOf(taskId));
      await rm(backing, { recursive: true, force: true });
    }
    // A mounted image may be renamed: its loop device holds the file, not the name.
    await rename(scratch, backing);
    return this.open(taskId);
  }

  async dropScratch(taskId: string): Promise<void> {
    const backing = this.backingOf(taskId);
    await this.unmount(`${this.mountPointOf(taskId)}.restoring`);
    // A scratch mounted in the workspace's own place: there is no committed workspace behind it.
    if (!(await this.exists(taskId))) await this.unmount(this.mountPointOf(taskId));
    await rm(`${backing}.restoring`, { recursive: true, force: true });
  }

  /** Unmounts and removes the workspace, and gives its uid back. */
  async destroy(taskId: string): Promise<void> {
    const backing = this.backingOf(taskId);
    const uid = await this.uidOf(taskId);
    await this.dropScratch(taskId);
    await this.unmount(this.mountPointOf(taskId));
    await rm(backing, { recursive: true, force: true });
    if (uid !== undefined) await this.uids.release(uid, backing);
  }

  /**
   * Unmounts what a crashed instance, or a DATA_DIR deleted under a running one, left mounted on
   * this host: mounts whose backing image or folder no longer exists. Their uids are free again.
   */
  async sweepStale(): Promise<number> {
    const root = `${join(this.settings.runtimeDir, 'w')}/`;
    let swept = 0;
    for (const mount of await readMountTable()) {
      if (!mount.mountPoint.startsWith(root)) continue;
      const backing = await backingFileOf(mount);
      if (backing === undefined || !backing.deleted) continue;
      const owner = await stat(mount.mountPoint).then(
        (s) => s.uid,
        () => undefined,
      );
      await this.unmount(mount.mountPoint, true).catch(() => undefined);
      if (owner !== undefined) await this.uids.release(owner, backing.path);
      swept++;
    }
    return swept;
  }

  /**
   * Mounts `backing` at `mountPoint`, making it first if missing (with a `downloads/` folder,
   * unless it is a scratch a restore fills). `claimKey` names the task's uid claim (its own
   * backing's path, also while a scratch is filled for it).
   */
  private async openAt(
    backing: string,
    mountPoint: string,
    claimKey: string,
    { downloads, uid }: { downloads: boolean; uid?: number },
  ): Promise<Volume> {
    const mounted = await ownerOfMount(mountPoint);
    if (mounted !== undefined) {
      if (await pathExists(backing)) return { path: mountPoint, owner: { uid: mounted, gid: mounted } };
      // Mounted from something else: a restore's scratch that a crash left uncommitted.
      await this.unmount(mountPoint);
    }
    await this.prepareFolders();
    const made = !(await pathExists(backing));
    if (made) {
      const claimed = uid ?? (await this.uids.claim(claimKey));
      await this.make(backing, claimed).catch(async (error: unknown) => {
        if (uid === undefined) await this.uids.release(claimed, claimKey);
        throw error;
      });
    }
    await mkdir(mountPoint, { mode: 0o000 }).catch(ignoreExisting);
    try {
      await mountBacking(backing, mountPoint);
      const found = (await stat(mountPoint)).uid;
      const ownerUid = (await this.uids.reclaim(found, claimKey)) ? found : await this.reassign(claimKey, mountPoint);
      const owner = { uid: ownerUid, gid: ownerUid };
      // Made in the mounted root, the same for an image and a folder; nothing of the task has run in it yet.
      if (made && downloads) await makeDownloadsFolder(mountPoint, owner);
      return { path: mountPoint, owner };
    } catch (error) {
      await this.unmount(mountPoint).catch(() => undefined);
      throw error;
    }
  }

  /** A new, empty backing owned by `uid`: made beside its final name, so a crash never leaves half of one. */
  private async make(backing: string, uid: number): Promise<void> {
    const partial = `${backing}.new`;
    await rm(partial, { recursive: true, force: true });
    try {
      if (this.kind === 'folder') await makeFolder(partial, uid);
      else await makeImage(partial, this.settings.quotaBytes, uid);
      await rename(partial, backing);
    } catch (error) {
      await rm(partial, { recursive: true, force: true });
      throw error;
    }
  }

  /**
   * The uid this workspace carries belongs to another live workspace (the claims folder was
   * emptied by a reboot and the uid given out again before this one was mounted): the files
   * move to a fresh uid. Nothing of the task runs meanwhile, and no link is followed.
   */
  private async reassign(claimKey: string, mountPoint: string): Promise<number> {
    const uid = await this.uids.claim(claimKey);
    await chownTree(mountPoint, uid);
    return uid;
  }

  private async unmount(mountPoint: string, lazy = false): Promise<void> {
    // The detector holds the mount open while it watches it: let go first, or the unmount is busy.
    const taskId = basename(mountPoint);
    if (isTaskId(taskId) && mountPoint === this.mountPointOf(taskId)) await this.hints.unwatch(taskId);
    if ((await ownerOfMount(mountPoint)) !== undefined || lazy) await unmountPoint(mountPoint, lazy);
    await rmdir(mountPoint).catch(() => undefined);
  }

  private async uidOf(taskId: string): Promise<number | undefined> {
    return ownerOfMount(this.mountPointOf(taskId));
  }

  private async prepareFolders(): Promise<void> {
    await mkdir(this.backings, { recursive: true, mode: 0o700 });
    await chmod(this.backings, 0o700);
    // Passable, not listable: bwrap, as the task's uid, must reach its own mount point by path.
    for (const dir of [this.settings.runtimeDir, join(this.settings.runtimeDir, 'w'), this.mounts]) {
      await mkdir(dir, { recursive: true, mode: 0o711 });
      await chmod(dir, 0o711);
    }
  }
}

/** Where a task's workspace is mounted: known without asking the host anything. */
export function workspaceMountPoint(settings: Pick<VolumeSettings, 'dataDir' | 'runtimeDir'>, taskId: string): string {
  return join(mountsFolder(settings), checked(taskId));
}

/** One folder per DATA_DIR: a restarted instance finds its mounts again, other instances never meet them. */
function mountsFolder(settings: Pick<VolumeSettings, 'dataDir' | 'runtimeDir'>): string {
  const key = createHash('sha256').update(resolve(settings.dataDir)).digest('hex').slice(0, 16);
  return join(settings.runtimeDir, 'w', key);
}

function checked(taskId: string): string {
  if (!isTaskId(taskId)) throw new ValidationError(`invalid task id "${basename(taskId)}"`);
  return taskId;
}

function ignoreExisting(error: NodeJS.ErrnoException): void {
  if (error.code !== 'EEXIST') throw error;
}
