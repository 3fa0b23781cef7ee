import { NoFollowDir } from './no-follow-dir';

/** Folders nested deeper than this are left out (and reported): each level holds a descriptor open. */
export const SNAPSHOT_MAX_DEPTH = 256;

/** Told about every entry left out of the archive, with why (a FIFO, a socket, too deep, …). */
export type OnSkipped = (path: string, why: string) => void;

/**
 * The workspace-relative names a snapshot holds, the root (`.`) first, each folder before what
 * is in it: folders, regular files and symlinks (which are archived as links). The workspace is
 * read the way the artifact scanner reads it, through NoFollowDir, so no link is ever followed
 * and no FIFO, socket or device is ever opened: those are left out and reported through
 * `onSkipped`, as are names that are not UTF-8 and folders nested too deep. tar, given exactly
 * these names, then archives them from inside the task's sandbox.
 */
export async function* snapshotEntries(root: string, onSkipped: OnSkipped = () => undefined): AsyncGenerator<string> {
  const dir = await NoFollowDir.open(root);
  try {
    yield '.';
    yield* entriesOf(dir, '', 1, onSkipped);
  } finally {
    await dir.close();
  }
}

async function* entriesOf(dir: NoFollowDir, prefix: string, depth: number, onSkipped: OnSkipped): AsyncGenerator<string> {
  for (const entry of await dir.list()) {
    const path = `${prefix}${entry.name}`;
    if (entry.kind === 'special' || !entry.stats) {
      onSkipped(path, entry.special ?? 'a special file');
      continue;
    }
    if (entry.kind !== 'dir') {
      yield path;
      continue;
    }
    if (depth > SNAPSHOT_MAX_DEPTH) {
      onSkipped(path, `a folder more than ${SNAPSHOT_MAX_DEPTH} levels deep`);
      continue;
    }
    const sub = await dir.openDir(entry.name);
    if (!sub) continue; // gone, or swapped for something else, since it was listed
    try {
      yield path;
      yield* entriesOf(sub, `${path}/`, depth + 1, onSkipped);
    } finally {
      await sub.close();
    }
  }
}
