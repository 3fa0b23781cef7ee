import { lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';

/** Bytes used under `dir` (allocated blocks, symlinks not followed); stops early past `stopAbove`. */
export async function diskUsage(dir: string, stopAbove = Number.POSITIVE_INFINITY, maxEntries = 200_000): Promise<number> {
  let total = 0;
  let seen = 0;
  const pending = [dir];
  while (pending.length > 0 && total <= stopAbove && seen < maxEntries) {
    const current = pending.pop() as string;
    const entries = await readdir(current, { withFileTypes: true }).catch(() => []);
    for (const entry of entries) {
      seen += 1;
      const path = join(current, entry.name);
      const info = await lstat(path).catch(() => undefined);
      if (!info) continue;
      // Allocated blocks, not apparent size: a sparse file takes no space.
      if (!info.isDirectory()) total += info.blocks * 512;
      if (entry.isDirectory()) pending.push(path);
    }
  }
  return total;
}
