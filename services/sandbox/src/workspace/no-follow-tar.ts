import type * as Tar from 'tar';
import type { HeaderData } from 'tar';
import { NoFollowDir, NoFollowEntry } from './no-follow-dir';

const BLOCK = 512;
const CHUNK = 1024 * 1024;
/** Folders nested deeper than this are left out (and reported): each level holds a descriptor open. */
export const TAR_MAX_DEPTH = 256;

/** Told about every entry left out of the archive, with why (a FIFO, a socket, too deep, …). */
export type OnSkipped = (path: string, why: string) => void;

/**
 * tar's header encoders, loaded at the first archive: the package costs every start ~20 ms of CPU
 * and most starts take no snapshot (BENCHMARKS.md, "Footprint").
 */
let encoders: Pick<typeof Tar, 'Header' | 'Pax'> | undefined;

/**
 * The tar stream (POSIX ustar, PAX headers for long names) of everything under `root`: folders,
 * regular files and symlinks (stored as links). It reads the workspace the way the artifact
 * scanner does, through NoFollowDir, so no link is ever followed and no FIFO, socket or device is
 * ever opened: those are skipped and reported through `onSkipped`, as are names that are not
 * UTF-8. Hard links are stored as separate files. A file that shrinks while it is read is padded
 * with zeros to the size its header announced, so the archive always stays well formed.
 */
export async function* tarWithoutFollowing(root: string, onSkipped: OnSkipped = () => undefined): AsyncGenerator<Buffer> {
  encoders ??= await import('tar');
  const dir = await NoFollowDir.open(root);
  try {
    // The root itself comes first: an empty workspace still makes an archive with an entry, which tar requires.
    yield header({ path: './', type: 'Directory', mode: 0o700, mtime: new Date(), size: 0 });
    yield* entriesOf(dir, '', 1, onSkipped);
  } finally {
    await dir.close();
  }
  yield Buffer.alloc(2 * BLOCK);
}

async function* entriesOf(dir: NoFollowDir, prefix: string, depth: number, onSkipped: OnSkipped): AsyncGenerator<Buffer> {
  for (const entry of await dir.list()) {
    const path = `${prefix}${entry.name}`;
    if (entry.kind === 'special' || !entry.stats) {
      onSkipped(path, entry.special ?? 'a special file');
      continue;
    }
    const common = { mode: entry.stats.mode & 0o7777, mtime: entry.stats.mtime };
    if (entry.kind === 'symlink') {
      const linkpath = await dir.readLink(entry.name).catch(() => undefined);
      if (linkpath !== undefined) yield header({ ...common, path, type: 'SymbolicLink', linkpath, size: 0 });
    } else if (entry.kind === 'dir') {
      yield* directory(dir, entry, path, depth, onSkipped);
    } else {
      yield* file(dir, entry, path);
    }
  }
}

async function* directory(
  parent: NoFollowDir,
  entry: NoFollowEntry,
  path: string,
  depth: number,
  onSkipped: OnSkipped,
): AsyncGenerator<Buffer> {
  if (depth > TAR_MAX_DEPTH) {
    onSkipped(path, `a folder more than ${TAR_MAX_DEPTH} levels deep`);
    return;
  }
  const sub = await parent.openDir(entry.name);
  if (!sub) return; // gone, or swapped for something else, since it was listed
  try {
    yield header({ mode: (entry.stats?.mode ?? 0o755) & 0o7777, mtime: entry.stats?.mtime, path: `${path}/`, type: 'Directory', size: 0 });
    yield* entriesOf(sub, `${path}/`, depth + 1, onSkipped);
  } finally {
    await sub.close();
  }
}

async function* file(parent: NoFollowDir, entry: NoFollowEntry, path: string): AsyncGenerator<Buffer> {
  const opened = await parent.openFile(entry.name);
  if (!opened) return;
  try {
    const size = opened.stats.size;
    yield header({ path, type: 'File', size, mode: opened.stats.mode & 0o7777, mtime: opened.stats.mtime });
    let position = 0;
    while (position < size) {
      const buffer = Buffer.allocUnsafe(Math.min(CHUNK, size - position));
      const { bytesRead } = await opened.handle.read(buffer, 0, buffer.length, position);
      if (bytesRead === 0) break;
      position += bytesRead;
      yield buffer.subarray(0, bytesRead);
    }
    // Shrunk while being read: zeros keep the announced size; the padding ends the block.
    yield Buffer.alloc(size - position + padding(size));
  } finally {
    await opened.handle.close();
  }
}

function header(data: HeaderData): Buffer {
  if (!encoders) throw new Error('tar headers are encoded only inside tarWithoutFollowing, which loads tar first');
  const { Header, Pax } = encoders;
  const h = new Header(data);
  const needsPax = h.encode();
  if (!h.block) throw new Error(`could not encode a tar header for ${JSON.stringify(data.path)}`);
  if (!needsPax) return h.block;
  const pax = new Pax({ path: data.path, linkpath: data.linkpath, size: data.size, mtime: data.mtime }).encode();
  return Buffer.concat([pax, h.block]);
}

function padding(size: number): number {
  return (BLOCK - (size % BLOCK)) % BLOCK;
}
