import { mkdir, mkdtemp, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

/** A real workspace directory plus a sibling "outside" directory that symlink escapes point at. */
export interface TempWorkspace {
  readonly root: string;
  readonly outside: string;
  /** Creates `rel` (and its parents) inside the workspace. */
  file(rel: string, content: string | Uint8Array): Promise<string>;
  link(rel: string, target: string): Promise<void>;
  /** Every entry name under `rel`, hidden ones included: how specs spot leftover temp files. */
  names(rel?: string): Promise<string[]>;
  cleanup(): Promise<void>;
}

export async function createTempWorkspace(): Promise<TempWorkspace> {
  const base = await mkdtemp(join(tmpdir(), 'sandbox-ws-'));
  const root = join(base, 'workspace');
  const outside = join(base, 'outside');
  await mkdir(root);
  await mkdir(outside);
  return {
    root,
    outside,
    async file(rel, content) {
      const path = join(root, rel);
      await mkdir(dirname(path), { recursive: true });
      await writeFile(path, content);
      return path;
    },
    async link(rel, target) {
      const path = join(root, rel);
      await mkdir(dirname(path), { recursive: true });
      await symlink(target, path);
    },
    names: (rel = '.') => readdir(join(root, rel)),
    cleanup: () => rm(base, { recursive: true, force: true }),
  };
}
