import type { Stats } from 'node:fs';
import { constants } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { lstat, open, readdir, readlink, symlink } from 'node:fs/promises';

/** What a directory entry is, seen without following it. */
export type EntryKind = 'file' | 'dir' | 'symlink' | 'special';

export interface NoFollowEntry {
  readonly name: string;
  readonly kind: EntryKind;
  /** lstat of the entry; undefined when its name cannot be used (see `special`). */
  readonly stats?: Stats;
  /** For `special`: what it is (FIFO, socket, device, a name that is not UTF-8, …). */
  readonly special?: string;
}

export interface OpenedFile {
  readonly handle: FileHandle;
  /** fstat of the open file: its size and times, whatever happens to the name afterwards. */
  readonly stats: Stats;
}

// O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer. O_NOCTTY: never
// take a terminal. O_NOFOLLOW: a symlink in the last place fails with ELOOP instead of being followed.
const FILE_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK | constants.O_NOCTTY;
const DIR_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_DIRECTORY;

/**
 * A directory opened as a descriptor, through which everything below it is reached one name at
 * a time with no symlink ever followed: `openat(fd, name, O_NOFOLLOW)` semantics, which Node
 * lacks, through `/proc/self/fd/<fd>/<name>` (the kernel jumps to the open directory itself and
 * then looks up the one name). Since no name is `..` and none contains `/`, nothing reached this
 * way can lie outside the directory, whatever links, renames or swaps the workspace holds: this
 * is how the service itself reads a workspace (artifact scans, snapshots), as RESOLVE_BENEATH would.
 */
export class NoFollowDir {
  private constructor(
    private readonly handle: FileHandle,
    /** Where it is, for messages only: never used to reach anything. */
    readonly label: string,
  ) {}

  /** Opens `path` itself as a directory; a symlink there is refused (ENOTDIR), not followed. */
  static async open(path: string): Promise<NoFollowDir> {
    return new NoFollowDir(await open(path, DIR_FLAGS), path);
  }

  /** Every entry, sorted by name, each lstat'ed (never followed). Entries that vanish meanwhile are left out. */
  async list(): Promise<NoFollowEntry[]> {
    const names = (await readdir(this.self(), { encoding: 'buffer' })).sort(Buffer.compare);
    const entries: NoFollowEntry[] = [];
    for (const raw of names) {
      const name = utf8(raw);
      // A name that is not UTF-8 cannot be recorded or archived faithfully as text.
      if (name === undefined) {
        entries.push({ name: raw.toString('utf8'), kind: 'special', special: 'a name that is not valid UTF-8' });
        continue;
      }
      const stats = await lstat(this.at(name)).catch(ignoreMissing);
      if (stats) entries.push({ name, stats, ...kindOf(stats) });
    }
    return entries;
  }

  /** The entry `name` as `list` would give it, or undefined when there is none. */
  async entry(name: string): Promise<NoFollowEntry | undefined> {
    const stats = await lstat(this.at(name)).catch(ignoreMissing);
    return stats && { name, stats, ...kindOf(stats) };
  }

  /** The sub-directory `name`, or undefined when it is missing or is anything but a real directory (a link to one included). */
  async openDir(name: string): Promise<NoFollowDir | undefined> {
    const handle = await open(this.at(name), DIR_FLAGS).catch((error: NodeJS.ErrnoException) => {
      if (['ENOENT', 'ELOOP', 'ENOTDIR'].includes(error.code ?? '')) return undefined;
      throw error;
    });
    return handle && new NoFollowDir(handle, `${this.label}/${name}`);
  }

  /** The regular file `name`, open for reading, or undefined when it is missing or anything else (link, FIFO, device…). */
  async openFile(name: string): Promise<OpenedFile | undefined> {
    // lstat first: a device must not even be opened (opening some has side effects).
    const before = await lstat(this.at(name)).catch(ignoreMissing);
    if (!before?.isFile()) return undefined;
    const handle = await open(this.at(name), FILE_FLAGS).catch((error: NodeJS.ErrnoException) => {
      if (['ENOENT', 'ELOOP', 'ENXIO'].includes(error.code ?? '')) return undefined;
      throw error;
    });
    if (!handle) return undefined;
    const stats = await handle.stat();
    // Swapped for something else between the lstat and the open.
    if (!stats.isFile() || stats.ino !== before.ino || stats.dev !== before.dev) {
      await handle.close();
      return undefined;
    }
    return { handle, stats };
  }

  /** The target text of the symlink `name` (never followed). */
  readLink(name: string): Promise<string> {
    return readlink(this.at(name));
  }

  /** Creates the symlink `name` here, pointing at `target` (which is not looked at). */
  createSymlink(name: string, target: string): Promise<void> {
    return symlink(target, this.at(name));
  }

  close(): Promise<void> {
    return this.handle.close();
  }

  private self(): string {
    return `/proc/self/fd/${this.handle.fd}`;
  }

  private at(name: string): string {
    if (name === '' || name === '.' || name === '..' || name.includes('/') || name.includes('\0')) {
      throw new Error(`not a single entry name: ${JSON.stringify(name)}`);
    }
    return `${this.self()}/${name}`;
  }
}

function kindOf(stats: Stats): { kind: EntryKind; special?: string } {
  if (stats.isFile()) return { kind: 'file' };
  if (stats.isDirectory()) return { kind: 'dir' };
  if (stats.isSymbolicLink()) return { kind: 'symlink' };
  if (stats.isFIFO()) return { kind: 'special', special: 'a FIFO (named pipe)' };
  if (stats.isSocket()) return { kind: 'special', special: 'a socket' };
  if (stats.isCharacterDevice() || stats.isBlockDevice()) return { kind: 'special', special: 'a device file' };
  return { kind: 'special', special: 'a special file' };
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

function utf8(raw: Buffer): string | undefined {
  try {
    return strictUtf8.decode(raw);
  } catch {
    return undefined;
  }
}

function ignoreMissing(error: NodeJS.ErrnoException): undefined {
  if (error.code === 'ENOENT' || error.code === 'ENOTDIR') return undefined;
  throw error;
}
