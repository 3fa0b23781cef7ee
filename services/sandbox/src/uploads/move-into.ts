import { link, lstat, readdir, rename, rm, unlink } from 'node:fs/promises';
import { join } from 'node:path';

interface Move {
  readonly source: string;
  readonly target: string;
  readonly directory: boolean;
}

/**
 * Moves everything under `from` into `into` (same filesystem), merging folders both have. Every
 * name is checked before anything moves: an entry that would replace one already there (a file, a
 * link, or a file where a folder is) is refused with `clash(path)`. Folders are merged only into
 * real folders, never through a symlink. If a move fails midway, what was moved is removed again.
 */
export async function moveInto(from: string, into: string, clash: (path: string) => Error): Promise<void> {
  const moves: Move[] = [];
  await plan(from, into, '', moves, clash);
  const moved: string[] = [];
  try {
    for (const { source, target, directory } of moves) {
      if (directory) await rename(source, target);
      else {
        // link fails on a taken name, where rename would silently replace a file that appeared since the check.
        await link(source, target);
        await unlink(source);
      }
      moved.push(target);
    }
  } catch (error) {
    for (const target of moved.reverse()) await rm(target, { recursive: true, force: true });
    throw error;
  }
}

async function plan(from: string, into: string, prefix: string, moves: Move[], clash: (path: string) => Error): Promise<void> {
  const entries = await readdir(from, { withFileTypes: true });
  entries.sort((a, b) => (a.name < b.name ? -1 : 1));
  for (const entry of entries) {
    const [source, target, path] = [join(from, entry.name), join(into, entry.name), `${prefix}${entry.name}`];
    const existing = await lstat(target).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return undefined;
      throw error;
    });
    if (!existing) moves.push({ source, target, directory: entry.isDirectory() });
    else if (existing.isDirectory() && entry.isDirectory()) await plan(source, target, `${path}/`, moves, clash);
    else throw clash(path);
  }
}
