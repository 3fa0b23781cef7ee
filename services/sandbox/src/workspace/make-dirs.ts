import { chown, mkdir } from 'node:fs/promises';
import { relative, sep } from 'node:path';
import type { FileOwner } from '../provider/sandbox-provider.port';

/**
 * `mkdir -p` of `dir` inside `root`, giving each directory it creates to `owner`, so the sandbox
 * user can add to folders the host made for it. Existing directories are left as they are.
 */
export async function makeDirs(root: string, dir: string, owner?: FileOwner): Promise<void> {
  if (!owner) {
    await mkdir(dir, { recursive: true });
    return;
  }
  const parts = relative(root, dir)
    .split(sep)
    .filter((p) => p !== '');
  let current = root;
  for (const part of parts) {
    current = `${current}${sep}${part}`;
    const created = await mkdir(current).then(
      () => true,
      (error: NodeJS.ErrnoException) => {
        if (error.code === 'EEXIST') return false;
        throw error;
      },
    );
    if (created) await chown(current, owner.uid, owner.gid);
  }
}
