import type { FileHandle } from 'node:fs/promises';
import { open } from 'node:fs/promises';
import type { ObjectInfo } from '../object-store.port';

/*
 * One object is one file: its body, then its metadata as JSON, the JSON's length (uint32 BE) and a
 * magic tag. Body and metadata are renamed into place together, so a reader holding the file open
 * never pairs one version's bytes with another version's hash, as a sidecar file could.
 */
const MAGIC = Buffer.from('ATSOBJ01');
const TAIL = 4 + MAGIC.length;
const MAX_METADATA = 64 * 1024;

/** Appends the metadata to a body written to `path`, and flushes the file to disk. */
export async function finishObjectFile(path: string, info: ObjectInfo): Promise<void> {
  const handle = await open(path, 'a');
  try {
    await handle.write(metadataTrailer(info));
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** A body held in memory and its metadata, written to a new file `path` and flushed in one go. */
export async function writeObjectFile(path: string, body: Buffer, info: ObjectInfo): Promise<void> {
  const handle = await open(path, 'wx', 0o600);
  try {
    await handle.writev([body, metadataTrailer(info)]);
    await handle.sync();
  } finally {
    await handle.close();
  }
}

function metadataTrailer(info: ObjectInfo): Buffer {
  const json = Buffer.from(JSON.stringify(info));
  const tail = Buffer.alloc(TAIL);
  tail.writeUInt32BE(json.length, 0);
  MAGIC.copy(tail, 4);
  return Buffer.concat([json, tail]);
}

/** The metadata of an open object file, and how many bytes of body come before it. */
export async function readTrailer(handle: FileHandle, key: string): Promise<{ info: ObjectInfo; bodySize: number }> {
  const { size } = await handle.stat();
  const tail = await readAt(handle, size - TAIL, TAIL);
  if (!tail?.subarray(4).equals(MAGIC)) throw damaged(key);
  const length = tail.readUInt32BE(0);
  const bodySize = size - TAIL - length;
  const json = length <= MAX_METADATA && bodySize >= 0 ? await readAt(handle, bodySize, length) : undefined;
  const info = json && parseInfo(json);
  if (!info || info.size !== bodySize) throw damaged(key);
  return { info, bodySize };
}

async function readAt(handle: FileHandle, position: number, length: number): Promise<Buffer | undefined> {
  if (position < 0) return undefined;
  const buffer = Buffer.alloc(length);
  const { bytesRead } = await handle.read(buffer, 0, length, position);
  return bytesRead === length ? buffer : undefined;
}

function parseInfo(json: Buffer): ObjectInfo | undefined {
  try {
    return JSON.parse(json.toString('utf8')) as ObjectInfo;
  } catch {
    return undefined;
  }
}

function damaged(key: string): Error {
  return new Error(`object "${key}" is damaged: its metadata trailer is missing or unreadable`);
}
