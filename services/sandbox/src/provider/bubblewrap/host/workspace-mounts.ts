import { chmod, chown, mkdir, open, readFile, rmdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { hostCommand } from './host-command';
import { pathExists } from './path-exists';

const MKFS = '/usr/sbin/mkfs.ext4';
const MOUNT = '/usr/bin/mount';
const UMOUNT = '/usr/bin/umount';
const CHOWN = '/usr/bin/chown';
const LOOP_CONTROL = '/dev/loop-control';
/** A journal costs 4 MiB of the quota; below this a workspace goes without (fsck-free remounts matter less than space there). */
const JOURNAL_FROM_BYTES = 64 * 1024 * 1024;
const MOUNT_OPTIONS = 'nosuid,nodev,noatime';

// What makes, mounts and unmounts a workspace (workspace-volumes.ts decides when): the host's own
// tools, run as root through hostCommand, with a fixed environment and only paths the service made.

/** Why a per-workspace filesystem cannot be had here, or undefined when it can. */
export async function filesystemUnavailable(): Promise<string | undefined> {
  for (const [path, what] of [
    [LOOP_CONTROL, 'no loop devices'],
    [MKFS, 'mkfs.ext4 is missing (Debian package "e2fsprogs")'],
    [MOUNT, 'mount is missing'],
  ])
    if (!(await pathExists(path))) return `${what} (${path})`;
  return undefined;
}

/** An empty folder at `path`, 0700, owned by `uid`. */
export async function makeFolder(path: string, uid: number): Promise<void> {
  await mkdir(path, { mode: 0o700 });
  await chown(path, uid, uid);
}

/**
 * A sparse file of exactly `quotaBytes` at `path` holding an empty ext4 filesystem whose root is
 * `uid`'s: no blocks reserved for root, inode tables and journal initialised lazily (milliseconds).
 */
export async function makeImage(path: string, quotaBytes: number, uid: number): Promise<void> {
  const handle = await open(path, 'wx', 0o600);
  await handle.truncate(quotaBytes).finally(() => handle.close());
  const journal = quotaBytes >= JOURNAL_FROM_BYTES ? ['-J', 'size=4'] : ['-O', '^has_journal'];
  await hostCommand(MKFS, [
    '-q',
    '-F',
    '-m',
    '0',
    '-b',
    '4096',
    ...journal,
    '-E',
    `lazy_itable_init=1,lazy_journal_init=1,nodiscard,root_owner=${uid}:${uid}`,
    path,
  ]);
}

/** Mounts a backing (an image through a loop device, or a folder bound) at `mountPoint`, its root 0700. */
export async function mountBacking(backing: string, mountPoint: string): Promise<void> {
  if ((await stat(backing)).isDirectory()) {
    await hostCommand(MOUNT, ['--bind', '--', backing, mountPoint]);
    await hostCommand(MOUNT, ['-o', `remount,bind,${MOUNT_OPTIONS}`, '--', mountPoint]);
  } else {
    await hostCommand(MOUNT, ['-t', 'ext4', '-o', `loop,${MOUNT_OPTIONS}`, '--', backing, mountPoint]);
    // mkfs makes it, root's; the task must not see it, and has no use for it.
    await rmdir(join(mountPoint, 'lost+found')).catch(() => undefined);
  }
  await chmod(mountPoint, 0o700);
}

/** Unmounts; a busy mount (a reader still has a file open) is detached at once and freed when the last file closes. */
export async function unmountPoint(mountPoint: string, lazy: boolean): Promise<void> {
  await hostCommand(UMOUNT, [...(lazy ? ['--lazy'] : []), '--', mountPoint]).catch(async (error: Error) => {
    if (!/busy/i.test(error.message)) throw error;
    await hostCommand(UMOUNT, ['--lazy', '--', mountPoint]);
  });
}

/** Gives everything below `mountPoint` to `uid`: links themselves, never what they point at. */
export async function chownTree(mountPoint: string, uid: number): Promise<void> {
  await hostCommand(CHOWN, ['-R', '-h', '-P', `${uid}:${uid}`, '--', mountPoint]);
}

/**
 * The uid owning a mounted workspace, or undefined when nothing is mounted there: a mount point
 * is made root's and stays so until the task's filesystem (or folder) covers it.
 */
export async function ownerOfMount(mountPoint: string): Promise<number | undefined> {
  const info = await stat(mountPoint).catch(() => undefined);
  return info && info.isDirectory() && info.uid !== 0 ? info.uid : undefined;
}

/** What backs a mount: the loop device's image file, or a bind mount's folder; and whether it was deleted. */
export async function backingFileOf(mount: { root: string; source: string }): Promise<{ path: string; deleted: boolean } | undefined> {
  const loop = /^\/dev\/(loop\d+)$/.exec(mount.source);
  if (loop) {
    const file = await readFile(`/sys/block/${loop[1]}/loop/backing_file`, 'utf8').catch(() => undefined);
    if (file === undefined) return undefined;
    const path = file.trim();
    const deleted = path.endsWith(' (deleted)') || !(await pathExists(path));
    return { path: path.replace(/ \(deleted\)$/, ''), deleted };
  }
  // A bind mount of a folder that was removed shows "//deleted" after its path.
  if (mount.root.endsWith('//deleted')) return { path: mount.root.slice(0, -'//deleted'.length), deleted: true };
  return undefined;
}
