import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A fresh directory under the OS temp dir, and its removal (never fails). */
export const makeTmpDir = (label: string): Promise<string> => mkdtemp(join(tmpdir(), `bench-${label}-`));

export async function removeDir(dir: string | undefined): Promise<void> {
  if (!dir) return;
  await rm(dir, { recursive: true, force: true, maxRetries: 3 }).catch(() => undefined);
}
