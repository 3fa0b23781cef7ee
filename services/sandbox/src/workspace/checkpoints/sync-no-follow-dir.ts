import type { BigIntStats } from 'node:fs';
import { closeSync, constants, fstatSync, lstatSync, openSync, readSync, readdirSync, readlinkSync } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { open } from 'node:fs/promises';

// The same guarantees as NoFollowDir (no link followed, nothing outside reached, no FIFO or
// device opened), with synchronous calls: a checkpoint walks every entry of the workspace after
// every step, and the async form costs 6-9 times as much per entry
// (docs/design/workspace-checkpoints.md "Q1"). Every task process is dead by then, so nothing
// changes under the walk.
const FILE_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK | constants.O_NOCTTY;
const DIR_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_DIRECTORY;
const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

export type SyncEntry =
  | { readonly name: string; readonly kind: 'file' | 'dir' | 'symlink'; readonly stats: BigIntStats }
  | { readonly name: string; readonly kind: 'special'; readonly why: string };

/** A directory held open as a descriptor; names below it are reached through /proc/self/fd, one at a time. */
export class SyncNoFollowDir {
  private constructor(private readonly fd: number) {}

  static open(path: string): SyncNoFollowDir {
    return new SyncNoFollowDir(openSync(path, DIR_FLAGS));
  }

  /** Every entry, lstat'ed, in byte order of names; those gone meanwhile left out. */
  list(): SyncEntry[] {
    const entries: SyncEntry[] = [];
    for (const name of this.names()) {
      const entry = typeof name === 'string' ? this.entry(name) : name;
      if (entry) entries.push(entry);
    }
    return entries;
  }

  /** The names, in byte order, without looking at the entries (a name that is not UTF-8 is already its SyncEntry). */
  names(): (string | SyncEntry)[] {
    return readdirSync(this.self(), { encoding: 'buffer' })
      .sort(Buffer.compare)
      .map((raw) => utf8(raw) ?? { name: raw.toString('utf8'), kind: 'special', why: 'a name that is not valid UTF-8' });
  }

  /** The entry `name`, lstat'ed; undefined when it is gone. */
  entry(name: string): SyncEntry | undefined {
    const stats = lstatOrUndefined(this.at(name));
    return stats ? entryOf(name, stats) : undefined;
  }

  /** The sub-directory seen as `seen` by `list`, or undefined when it is gone or was swapped since. */
  openDir(name: string, seen: BigIntStats): SyncNoFollowDir | undefined {
    const fd = openOrUndefined(this.at(name), DIR_FLAGS);
    if (fd === undefined) return undefined;
    if (!sameInode(fstatSync(fd, { bigint: true }), seen)) {
      closeSync(fd);
      return undefined;
    }
    return new SyncNoFollowDir(fd);
  }

  /**
   * The first `seen.size` bytes of the regular file `name`, handed to `read` chunk by chunk
   * while the file is open; false when it is gone or was swapped for something else since.
   */
  readFile(name: string, seen: BigIntStats, read: (chunk: Buffer) => void, chunkBytes = 1024 * 1024): boolean {
    const fd = openOrUndefined(this.at(name), FILE_FLAGS);
    if (fd === undefined) return false;
    try {
      if (!sameInode(fstatSync(fd, { bigint: true }), seen)) return false;
      const size = Number(seen.size);
      const buffer = Buffer.allocUnsafe(Math.min(chunkBytes, Math.max(size, 1)));
      for (let done = 0; done < size;) {
        const n = readSync(fd, buffer, 0, Math.min(buffer.length, size - done), done);
        if (n === 0) return false; // shrank since the lstat
        read(Buffer.from(buffer.subarray(0, n)));
        done += n;
      }
      return true;
    } finally {
      closeSync(fd);
    }
  }

  /** The regular file `name` open for streaming, or undefined when it is gone or was swapped since `seen`. */
  async openFile(name: string, seen: BigIntStats): Promise<FileHandle | undefined> {
    const handle = await open(this.at(name), FILE_FLAGS).catch((error: NodeJS.ErrnoException) => {
      if (['ENOENT', 'ELOOP', 'ENOTDIR', 'ENXIO'].includes(error.code ?? '')) return undefined;
      throw error;
    });
    if (handle && !sameInode(await handle.stat({ bigint: true }), seen)) {
      await handle.close();
      return undefined;
    }
    return handle;
  }

  readLink(name: string): string | undefined {
    try {
      return readlinkSync(this.at(name));
    } catch {
      return undefined;
    }
  }

  close(): void {
    closeSync(this.fd);
  }

  private self(): string {
    return `/proc/self/fd/${this.fd}`;
  }

  private at(name: string): string {
    if (name === '' || name === '.' || name === '..' || name.includes('/') || name.includes('\0')) {
      throw new Error(`not a single entry name: ${JSON.stringify(name)}`);
    }
    return `${this.self()}/${name}`;
  }
}

function entryOf(name: string, stats: BigIntStats): SyncEntry {
  if (stats.isFile()) return { name, kind: 'file', stats };
  if (stats.isDirectory()) return { name, kind: 'dir', stats };
  if (stats.isSymbolicLink()) return { name, kind: 'symlink', stats };
  if (stats.isFIFO()) return { name, kind: 'special', why: 'a FIFO (named pipe)' };
  if (stats.isSocket()) return { name, kind: 'special', why: 'a socket' };
  if (stats.isCharacterDevice() || stats.isBlockDevice()) return { name, kind: 'special', why: 'a device file' };
  return { name, kind: 'special', why: 'a special file' };
}

function sameInode(a: BigIntStats, b: BigIntStats): boolean {
  return a.ino === b.ino && a.dev === b.dev && a.mode === b.mode;
}

function lstatOrUndefined(path: string): BigIntStats | undefined {
  try {
    return lstatSync(path, { bigint: true });
  } catch (error) {
    if (['ENOENT', 'ENOTDIR'].includes((error as NodeJS.ErrnoException).code ?? '')) return undefined;
    throw error;
  }
}

function openOrUndefined(path: string, flags: number): number | undefined {
  try {
    return openSync(path, flags);
  } catch (error) {
    if (['ENOENT', 'ELOOP', 'ENOTDIR', 'ENXIO'].includes((error as NodeJS.ErrnoException).code ?? '')) return undefined;
    throw error;
  }
}

function utf8(raw: Buffer): string | undefined {
  try {
    return strictUtf8.decode(raw);
  } catch {
    return undefined;
  }
}
