import { randomBytes } from 'node:crypto';
import { chown, lchown, lstat, mkdir, readdir, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { PassThrough, Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import * as tar from 'tar';
import { FileOwner } from './sandbox-provider.port';

export interface ArchiveBounds {
  readonly maxBytes: number;
  readonly timeoutMs: number;
}

/** Uncompressed bytes a restore may write, per compressed byte allowed: caps a decompression bomb. */
const RESTORE_EXPANSION = 10;

/**
 * A tar of `dir` (symlinks stored as links, never followed), failing past its bounds. Not
 * compressed: Node's single-threaded gzip made a 100 MB snapshot take ~3 s instead of ~0.3 s
 * (BENCHMARKS.md); restore reads gzip'd archives too.
 */
export function archiveDirectory(dir: string, bounds: ArchiveBounds): Readable {
  const out = new PassThrough();
  let size = 0;
  const limiter = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      size += chunk.length;
      if (size > bounds.maxBytes) return done(new Error(`snapshot exceeds ${bounds.maxBytes} bytes (SANDBOX_SNAPSHOT_MAX_BYTES)`));
      done(null, chunk);
    },
  });
  const timer = setTimeout(() => out.destroy(new Error(`snapshot took longer than ${bounds.timeoutMs} ms (SANDBOX_SNAPSHOT_TIMEOUT_MS)`)), bounds.timeoutMs);
  timer.unref();
  const source = tar.c({ gzip: false, cwd: dir, portable: true, follow: false }, ['.']) as unknown as Readable;
  pipeline(source, limiter, out)
    .catch((error: Error) => out.destroy(error))
    .finally(() => clearTimeout(timer));
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
  const timer = setTimeout(() => archive.destroy(new Error(`restore took longer than ${bounds.timeoutMs} ms (SANDBOX_SNAPSHOT_TIMEOUT_MS)`)), bounds.timeoutMs);
  try {
    await pipeline(archive, byteLimit(bounds.maxBytes, 'snapshot'), extractor(scratch, bounds.maxBytes * RESTORE_EXPANSION));
    if (owner) await chownTree(scratch, owner);
    const hadTarget = await lstat(target).then(() => true, () => false);
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

function extractor(cwd: string, maxUnpacked: number): NodeJS.WritableStream {
  let unpacked = 0;
  const stream = tar.x({
    cwd,
    strict: true,
    preservePaths: false,
    preserveOwner: false,
    filter: (_path, entry) => {
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

async function chownTree(dir: string, owner: FileOwner): Promise<void> {
  await chown(dir, owner.uid, owner.gid);
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  for (const entry of entries) {
    const path = join(entry.parentPath, entry.name);
    // lchown: a symlink is re-owned itself, never the file it points to.
    await lchown(path, owner.uid, owner.gid);
  }
}
