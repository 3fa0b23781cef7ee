import { NoFollowDir } from '../../workspace/no-follow-dir';

/** Each level holds a descriptor open while it is walked. */
const MAX_DEPTH = 512;
export const DISK_USAGE_MAX_ENTRIES = 1_000_000;

/**
 * Bytes used under `dir` (allocated blocks), stopping early past `stopAbove`. It runs while the
 * task's command does, so the folders are walked through NoFollowDir: a folder swapped for a
 * link to `/` mid-walk is never entered. A workspace it cannot measure whole (folders nested
 * deeper than MAX_DEPTH, more than `maxEntries` entries) counts as infinitely big: files hidden
 * past a bound must not escape the quota.
 */
export async function diskUsage(dir: string, stopAbove = Number.POSITIVE_INFINITY, maxEntries = DISK_USAGE_MAX_ENTRIES): Promise<number> {
  const tally = { total: 0, seen: 0 };
  const root = await NoFollowDir.open(dir).catch(() => undefined);
  if (!root) return 0;
  const done = () => tally.total > stopAbove || tally.seen >= maxEntries;

  const walk = async (current: NoFollowDir, depth: number): Promise<void> => {
    for (const entry of await current.list().catch(() => [])) {
      if (done()) return;
      tally.seen += 1;
      if (tally.seen >= maxEntries || (entry.kind === 'dir' && depth >= MAX_DEPTH)) {
        tally.total = Number.POSITIVE_INFINITY;
        return;
      }
      // Allocated blocks, not apparent size: a sparse file takes no space.
      if (entry.kind !== 'dir') tally.total += (entry.stats?.blocks ?? 0) * 512;
      else {
        const sub = await current.openDir(entry.name).catch(() => undefined);
        if (!sub) continue;
        try {
          await walk(sub, depth + 1);
        } finally {
          await sub.close();
        }
      }
    }
  };

  try {
    await walk(root, 1);
  } finally {
    await root.close();
  }
  return tally.total;
}
