import { lstat, opendir, realpath, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { resolveInWorkspace, toWorkspaceRelative } from '@app/common';
import { runTool } from './run-tool';
import { checkArgNames, optionalString } from './tool-args';
import type { ToolSpec } from './tool-spec';

export const LIST_FILES_MAX_ENTRIES = 1000;
export const LIST_FILES_MAX_DEPTH = 10;

interface Entry {
  readonly path: string;
  readonly type: 'file' | 'dir' | 'symlink';
  readonly size: number;
}

interface Listing {
  readonly entries: Entry[];
  readonly stoppedAtMaxEntries: boolean;
  readonly unexpandedDirs: number;
}

export const listFilesTool: ToolSpec = {
  name: 'list_files',
  readsOnly: true,
  description: `List the files and directories under a workspace directory, recursively (at most ${LIST_FILES_MAX_ENTRIES} entries, ${LIST_FILES_MAX_DEPTH} levels deep). Paths are relative to the workspace root. Symlinks are listed, not followed.`,
  parameters: {
    type: 'object',
    properties: { path: { type: 'string', description: 'Directory relative to the workspace root; defaults to "." (the root).' } },
    additionalProperties: false,
  },
  execute: (args, ctx) =>
    runTool(args, ctx, async () => {
      checkArgNames(args, ['path']);
      const target = await resolveInWorkspace(ctx.workspaceRoot, optionalString(args, 'path', '.'), { allowRoot: true });
      // Paths are shown relative to the real root, which is what resolveInWorkspace returns paths under.
      const rel = toWorkspaceRelative(await realpath(ctx.workspaceRoot), target);
      const info = await stat(target);
      if (!info.isDirectory()) return formatEntry({ path: rel, type: 'file', size: info.size });
      return formatListing(rel, await walk(target, rel, ctx.signal));
    }),
};

// Breadth first, so that when a bound cuts the walk the model still sees the top of the tree.
async function walk(dir: string, rel: string, signal?: AbortSignal): Promise<Listing> {
  const entries: Entry[] = [];
  let unexpandedDirs = 0;
  const queue = [{ abs: dir, rel, depth: 1 }];
  for (let next = queue.shift(); next; next = queue.shift()) {
    for await (const dirent of await opendir(next.abs)) {
      signal?.throwIfAborted();
      if (entries.length === LIST_FILES_MAX_ENTRIES) return { entries, stoppedAtMaxEntries: true, unexpandedDirs };
      const abs = join(next.abs, dirent.name);
      const path = next.rel === '.' ? dirent.name : `${next.rel}/${dirent.name}`;
      const type = dirent.isDirectory() ? 'dir' : dirent.isSymbolicLink() ? 'symlink' : 'file';
      entries.push({ path, type, size: type === 'file' ? (await lstat(abs)).size : 0 });
      if (type !== 'dir') continue;
      if (next.depth < LIST_FILES_MAX_DEPTH) queue.push({ abs, rel: path, depth: next.depth + 1 });
      else unexpandedDirs++;
    }
  }
  return { entries, stoppedAtMaxEntries: false, unexpandedDirs };
}

function formatListing(rel: string, listing: Listing): string {
  if (listing.entries.length === 0) return `${JSON.stringify(rel)} is an empty directory`;
  const lines = [...listing.entries].sort(byPathSegments).map(formatEntry);
  if (listing.stoppedAtMaxEntries) {
    lines.push(`[truncated: stopped at ${LIST_FILES_MAX_ENTRIES} entries; list a subdirectory to see the rest]`);
  }
  if (listing.unexpandedDirs > 0) {
    const dirs = listing.unexpandedDirs === 1 ? '1 directory' : `${listing.unexpandedDirs} directories`;
    lines.push(`[truncated: ${dirs} at depth ${LIST_FILES_MAX_DEPTH} not expanded; list it by path to go deeper]`);
  }
  return lines.join('\n');
}

function formatEntry(entry: Entry): string {
  const label = entry.type.padEnd('symlink'.length);
  if (entry.type === 'dir') return `${label} ${entry.path}/`;
  if (entry.type === 'symlink') return `${label} ${entry.path}`;
  return `${label} ${entry.path} (${entry.size} B)`;
}

// Segment by segment, so that a directory's entries follow it directly ("a/x" before "a-b").
function byPathSegments(a: Entry, b: Entry): number {
  const x = a.path.split('/');
  const y = b.path.split('/');
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    if (x[i] !== y[i]) return x[i] < y[i] ? -1 : 1;
  }
  return x.length - y.length;
}
