import { join } from 'node:path';
import { DOWNLOADS_DIR } from '../artifacts/artifact-scanner';
import type { FileOwner } from '../provider/sandbox-provider.port';
import { makeDirs } from './make-dirs';

/**
 * The `downloads/` folder of a workspace just made, the task's own: where the agent is told to
 * put what it hands back, there before its first command (`echo x > downloads/a.txt` works).
 * A restore does without: it brings back the snapshot as it was, with or without one.
 */
export function makeDownloadsFolder(workspace: string, owner?: FileOwner): Promise<void> {
  return makeDirs(workspace, join(workspace, DOWNLOADS_DIR), owner);
}
