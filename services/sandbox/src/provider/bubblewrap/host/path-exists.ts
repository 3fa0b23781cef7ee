import { access } from 'node:fs/promises';

/** Whether anything is at `path` (a missing parent, or no permission to look, counts as nothing). */
export function pathExists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  );
}
