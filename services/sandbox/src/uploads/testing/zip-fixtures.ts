import { writeFile } from 'node:fs/promises';
import * as yazl from 'yazl';

export interface ZipEntrySpec {
  readonly name: string;
  readonly content?: string | Buffer;
  /** Unix mode, e.g. 0o120777 for a symlink entry. */
  readonly mode?: number;
}

/**
 * Writes a real ZIP with yazl (tests only). yazl refuses unsafe names, so a name may use `@@/`
 * as a stand-in for `../` or `@@@@@@/` for `/etc/x`-style prefixes: the bytes are swapped in the
 * finished archive (same length, in the local header and the central directory alike).
 */
export async function writeZip(
  path: string,
  entries: readonly ZipEntrySpec[],
  swaps: Record<string, string> = { '@@/': '../' },
): Promise<void> {
  const zip = new yazl.ZipFile();
  for (const e of entries) {
    if (e.name.endsWith('/')) zip.addEmptyDirectory(e.name);
    else zip.addBuffer(Buffer.isBuffer(e.content) ? e.content : Buffer.from(e.content ?? ''), e.name, { mode: e.mode ?? 0o100644 });
  }
  zip.end();
  const chunks: Buffer[] = [];
  for await (const chunk of zip.outputStream) chunks.push(chunk as Buffer);
  let bytes: Buffer = Buffer.concat(chunks);
  for (const [from, to] of Object.entries(swaps)) bytes = swapAll(bytes, Buffer.from(from), Buffer.from(to));
  await writeFile(path, bytes);
}

function swapAll(bytes: Buffer, from: Buffer, to: Buffer): Buffer {
  if (from.length !== to.length) throw new Error('swaps must keep the length');
  for (let i = bytes.indexOf(from); i !== -1; i = bytes.indexOf(from, i + 1)) to.copy(bytes, i);
  return bytes;
}
