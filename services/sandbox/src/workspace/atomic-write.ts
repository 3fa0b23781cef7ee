import { randomBytes } from 'node:crypto';
import { open, rename, stat, unlink } from 'node:fs/promises';
import type { FileOwner } from '../provider/sandbox-provider.port';
import { basename, dirname, join } from 'node:path';

/**
 * Writes `data` to `path` through a temp file in the same directory, flushed and then renamed
 * over the target: readers and a crash see either the old file or the whole new one, never a
 * half-written file. An existing file keeps its permissions (a script stays executable); with an
 * `owner` the file belongs to the task's sandbox user, so its commands can change it later.
 */
export async function writeFileAtomic(path: string, data: string | Uint8Array, signal?: AbortSignal, owner?: FileOwner): Promise<void> {
  const mode = await stat(path).then(
    (info) => info.mode & 0o7777,
    () => undefined,
  );
  // The name is cut so that a target name near the 255-byte limit still leaves room for the suffix.
  const temp = join(dirname(path), `.${basename(path).slice(0, 64)}.${randomBytes(6).toString('hex')}.tmp`);
  const handle = await open(temp, 'wx');
  try {
    try {
      await handle.writeFile(data, { signal });
      if (mode !== undefined) await handle.chmod(mode);
      if (owner) await handle.chown(owner.uid, owner.gid);
      await handle.sync();
    } finally {
      await handle.close();
    }
    signal?.throwIfAborted();
    await rename(temp, path);
  } catch (error) {
    await unlink(temp).catch(() => undefined);
    throw error;
  }
}
