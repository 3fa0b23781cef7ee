import { open, readFile, readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';

/** Something a service persisted, for leak checks: where it is, and its bytes. */
export interface PersistedItem {
  readonly where: string;
  readonly bytes: Buffer;
}

/** Files larger than this are read in pieces, and pieces holding only zeros left out (a workspace image is mostly holes). */
const WHOLE_FILE_MAX_BYTES = 64 * 1024 * 1024;
const PIECE_BYTES = 1024 * 1024;
/** Pieces overlap by this much, so that a value cut by a piece's end is still found whole. */
const OVERLAP_BYTES = 64 * 1024;
const ZEROS = Buffer.alloc(PIECE_BYTES + OVERLAP_BYTES);

/** Every file under `dir`, recursively, with its bytes. */
export async function persistedFiles(dir: string): Promise<PersistedItem[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  const files = entries.filter((e) => e.isFile()).map((e) => join(e.parentPath ?? (e as unknown as { path: string }).path, e.name));
  const items: PersistedItem[] = [];
  for (const file of files) {
    if ((await stat(file)).size <= WHOLE_FILE_MAX_BYTES) items.push({ where: file, bytes: await readFile(file) });
    else items.push(...(await nonZeroPieces(file)));
  }
  return items;
}

/** A big file (a workspace's filesystem image, raw: deleted files' blocks included) as the pieces of it that hold anything. */
async function nonZeroPieces(file: string): Promise<PersistedItem[]> {
  const pieces: PersistedItem[] = [];
  const handle = await open(file, 'r');
  try {
    const { size } = await handle.stat();
    for (let offset = 0; offset < size; offset += PIECE_BYTES) {
      const buffer = Buffer.alloc(Math.min(PIECE_BYTES + OVERLAP_BYTES, size - offset));
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, offset);
      const piece = buffer.subarray(0, bytesRead);
      if (!piece.equals(ZEROS.subarray(0, piece.length))) pieces.push({ where: `${file} at ${offset}`, bytes: piece });
    }
  } finally {
    await handle.close();
  }
  return pieces;
}
