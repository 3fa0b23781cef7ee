import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';

/** Something a service persisted, for leak checks: where it is, and its bytes. */
export interface PersistedItem {
  readonly where: string;
  readonly bytes: Buffer;
}

/** Every file under `dir`, recursively, with its bytes. */
export async function persistedFiles(dir: string): Promise<PersistedItem[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  const files = entries.filter((e) => e.isFile()).map((e) => join(e.parentPath ?? (e as unknown as { path: string }).path, e.name));
  return Promise.all(files.map(async (file) => ({ where: file, bytes: await readFile(file) })));
}
