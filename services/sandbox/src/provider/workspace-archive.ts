import { randomBytes } from 'node:crypto';
import { chown, lchown, lstat, mkdir, readdir, rename, rm } from 'node:fs/promises';
import { basename, dirname, join, posix } from 'node:path';
import { PassThrough, Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type * as Tar from 'tar';
import { NoFollowDir } from '../workspace/no-follow-dir';
import { tarWithoutFollowing } from '../workspace/no-follow-tar';
import { ArchiveBounds, FileOwner, SnapshotOptions } from './sandbox-provider.port';

/** Uncompressed bytes a restore may write, per compressed byte allowed: caps a decompression bomb. */
const RESTORE_EXPANSION = 10;

/**
 * A tar of `dir`, read without following any link (tarWithoutFollowing), failing past its
 * bounds or when `signal` fires. Not compressed: Node's single-threaded gzip made a 100 MB
 * snapshot take ~3 s instead of ~0.3 s (BENCHMARKS.md); restore reads gzip'd archives too.
 */
export function archiveDirectory(dir: string, options: SnapshotOptions): Readable {
  const out = new PassThrough();
  let size = 0;
  const limiter = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      size += chunk.length;
      if (size > options.maxBytes) return done(new Error(`snapshot exceeds ${options.maxBytes} bytes (SANDBOX_SNAPSHOT_MAX_BYTES)`));
      done(null, chunk);
    },
  });
  const source = Readable.from(tarWithoutFollowing(dir, options.onSkipped), { objectMode: false });
  const stop = (error: Error) => {
    source.destroy(error);
    out.destroy(error);
  };
  const timer = setTimeout(
    () => stop(new Error(`snapshot took longer than ${options.timeoutMs} ms (SANDBOX_SNAPSHOT_TIMEOUT_MS)`)),
    options.timeoutMs,
  );
  timer.unref();
  const onAbort = () => stop(new Error('snapshot stopped: the sandbox is in use again'));
  options.signal?.addEventListener('abort', onAbort, { once: true });
  if (options.signal?.aborted) onAbort();
  pipeline(source, limiter, out)
    .catch((error: Error) => out.destroy(error))
    .finally(() => {
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
    });
  return out;
}

/**
 * Replaces `target` by the archive's contents, all or nothing: extracted into a fresh directory
 * beside it (absolute paths, `..` and writes through symlinks refused by tar), handed to `owner`,
 * then swapped in with renames. On any failure `target` is as it was and the scratch is gone.
 */
export async function restoreDirectory(target: string, archive: Readable, bounds: ArchiveBounds, owner?: FileOwner): Promise<void> {
  const scratch = join(dirname(target), `.restore-${basename(target)}-${randomBytes(4).toString('hex')}`);
  const previous = `${scratch}.previous`;
  await mkdir(scratch, { mode: 0o700 });
  const timer = setTimeout(
    () => archive.destroy(new Error(`restore took longer than ${bounds.timeoutMs} ms (SANDBOX_SNAPSHOT_TIMEOUT_MS)`)),
    bounds.timeoutMs,
  );
  try {
    const links: SymlinkEntry[] = [];
    // Loaded at the first restore: tar costs every start ~20 ms of CPU (BENCHMARKS.md, "Footprint").
    const tar = await import('tar');
    await pipeline(archive, byteLimit(bounds.maxBytes, 'snapshot'), extractor(tar, scratch, bounds.maxBytes * RESTORE_EXPANSION, links));
    await placeSymlinks(scratch, links);
    if (owner) await chownTree(scratch, owner);
    const hadTarget = await lstat(target).then(
      () => true,
      () => false,
    );
    if (hadTarget) await rename(target, previous);
    await rename(scratch, target);
    if (hadTarget) await rm(previous, { recursive: true, force: true });
  } catch (error) {
    await rm(scratch, { recursive: true, force: true });
    throw error;
  } finally {
    clearTimeout(timer);
  }
}

const RESTORED_TYPES = new Set(['File', 'OldFile', 'ContiguousFile', 'Directory', 'Link']);

interface SymlinkEntry {
  readonly path: string;
  readonly target: string;
}

function extractor(tar: typeof Tar, cwd: string, maxUnpacked: number, links: SymlinkEntry[]): NodeJS.WritableStream {
  let unpacked = 0;
  const stream = tar.x({
    cwd,
    strict: true,
    preservePaths: false,
    preserveOwner: false,
    filter: (path, entry) => {
      if (!('type' in entry)) return false;
      // Symlinks are made after everything else (placeSymlinks): tar refuses one pointing out of
      // the workspace, yet a Python venv's `bin/python -> /usr/bin/python3` is a normal link.
      if (entry.type === 'SymbolicLink') {
        if (entry.linkpath) links.push({ path, target: entry.linkpath });
        return false;
      }
      // Devices and FIFOs are never restored (strict mode would fail the whole restore on one).
      if (!RESTORED_TYPES.has(entry.type)) return false;
      unpacked += 'size' in entry ? Number(entry.size ?? 0) : 0;
      if (unpacked > maxUnpacked) stream.emit('error', new Error(`snapshot unpacks to more than ${maxUnpacked} bytes`));
      return unpacked <= maxUnpacked;
    },
  });
  return stream as unknown as NodeJS.WritableStream;
}

function byteLimit(maxBytes: number, what: string): Transform {
  let size = 0;
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      size += chunk.length;
      if (size > maxBytes) return done(new Error(`${what} exceeds ${maxBytes} bytes (SANDBOX_SNAPSHOT_MAX_BYTES)`));
      done(null, chunk);
    },
  });
}

/**
 * Creates the archive's symlinks once every file and folder is in place, whatever they point at:
 * nothing is ever written through them. Each is made in its parent folder reached without
 * following any link (NoFollowDir); one whose path is absolute, climbs with `..` or names no
 * existing folder is dropped. Links are grouped by folder, so each folder is opened once.
 */
async function placeSymlinks(root: string, links: readonly SymlinkEntry[]): Promise<void> {
  const byFolder = new Map<string, { name: string; target: string }[]>();
  for (const { path, target } of links) {
    const parts = posix
      .normalize(path)
      .split('/')
      .filter((p) => p !== '' && p !== '.');
    if (path.startsWith('/') || parts.length === 0 || parts.includes('..')) continue;
    const name = parts.pop() as string;
    const folder = parts.join('/');
    const group = byFolder.get(folder) ?? [];
    group.push({ name, target });
    byFolder.set(folder, group);
  }
  for (const [folder, entries] of byFolder) {
    const opened: NoFollowDir[] = [await NoFollowDir.open(root)];
    try {
      for (const part of folder === '' ? [] : folder.split('/')) {
        const sub = await opened[opened.length - 1].openDir(part);
        if (!sub) break;
        opened.push(sub);
      }
      if (opened.length !== (folder === '' ? 1 : folder.split('/').length + 1)) continue;
      for (const { name, target } of entries) await opened[opened.length - 1].createSymlink(name, target).catch(ignoreExisting);
    } finally {
      await Promise.all(opened.map((d) => d.close()));
    }
  }
}

function ignoreExisting(error: NodeJS.ErrnoException): void {
  if (error.code !== 'EEXIST') throw error;
}

async function chownTree(dir: string, owner: FileOwner): Promise<void> {
  await chown(dir, owner.uid, owner.gid);
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  for (const entry of entries) {
    const path = join(entry.parentPath, entry.name);
    // lchown: a symlink is re-owned itself, never the file it points to.
    await lchown(path, owner.uid, owner.gid);
  }
}
