import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { mkdir, open, readdir, rename, rm, stat } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { ConflictError, NotFoundError, PayloadTooLargeError, ValidationError } from '@app/common';
import { checkRangeShape, checkRangeWithin } from '../byte-range';
import { CountingHash } from '../counting-hash';
import { checkObjectKey, checkObjectPrefix } from '../object-key';
import type { ByteRange, ObjectInfo, ObjectStore, PutOptions, StoredObject } from '../object-store.port';
import { finishObjectFile, readTrailer, writeObjectFile } from './object-file';

/** A temp file this old belongs to a put that died with its process. */
const STALE_TEMP_MS = 60 * 60 * 1000;
const MAX_CONTENT_TYPE = 255;

/**
 * Objects as files under `<root>/keys/<key>` (DATA_DIR/objects in embedded mode). A put streams
 * into `<root>/tmp/`, appends the metadata (see object-file.ts), fsyncs and renames over the key:
 * readers see the old object or the new one, never a mix. Temp files live outside the key tree
 * so no key can collide with one. Directories are private (0700). A key cannot also be the
 * prefix of another key here (a file is not a directory); that is a ConflictError.
 */
export class LocalObjectStore implements ObjectStore {
  private readonly keys: string;
  private readonly temps: string;
  private ready?: Promise<void>;

  constructor(root: string) {
    this.keys = join(root, 'keys');
    this.temps = join(root, 'tmp');
  }

  async put(key: string, body: Readable | Buffer, options: PutOptions = {}): Promise<StoredObject> {
    const temp = join(this.temps, randomBytes(8).toString('hex'));
    // A body that fails while the store is still being prepared must not crash the process with
    // an unhandled 'error': hold the error and throw it once we get there.
    let early: unknown;
    const onEarlyError = (error: unknown) => (early ??= error);
    if (!Buffer.isBuffer(body)) body.on('error', onEarlyError);
    try {
      const path = this.pathOf(key);
      const { contentType } = options;
      if (contentType !== undefined && (contentType.length > MAX_CONTENT_TYPE || /[^\x20-\x7e]/.test(contentType))) {
        throw new ValidationError(`invalid content type for object "${key}"`);
      }
      await this.prepare();
      if (early !== undefined) throw early;
      const stored = Buffer.isBuffer(body)
        ? await writeBuffer(temp, body, options.maxBytes, contentType)
        : await writeStream(temp, body, options.maxBytes, contentType);
      await mkdir(dirname(path), { recursive: true, mode: 0o700 }).catch(asConflict(key));
      await rename(temp, path).catch(asConflict(key));
      await syncDirectory(dirname(path));
      return stored;
    } catch (error) {
      if (!Buffer.isBuffer(body)) body.destroy();
      await rm(temp, { force: true });
      throw error;
    } finally {
      if (!Buffer.isBuffer(body)) body.off('error', onEarlyError);
    }
  }

  async get(key: string, range?: ByteRange): Promise<Readable> {
    if (range) checkRangeShape(key, range);
    const handle = await this.openObject(key);
    if (!handle) throw new NotFoundError(`object "${key}"`);
    try {
      // The size comes from the open file, and the stream reads that same file: an overwrite
      // renames a new file over the key, so it can neither tear the read nor race the bound check.
      const { bodySize } = await readTrailer(handle, key);
      const { offset, length } = range ?? { offset: 0, length: bodySize };
      if (range) checkRangeWithin(key, range, bodySize);
      if (length > 0) return handle.createReadStream({ start: offset, end: offset + length - 1 });
    } catch (error) {
      await handle.close();
      throw error;
    }
    await handle.close();
    return Readable.from([]);
  }

  async stat(key: string): Promise<ObjectInfo | undefined> {
    const handle = await this.openObject(key);
    if (!handle) return undefined;
    try {
      return (await readTrailer(handle, key)).info;
    } finally {
      await handle.close();
    }
  }

  async delete(key: string): Promise<void> {
    const path = this.pathOf(key);
    const info = await stat(path).catch(() => undefined);
    if (info?.isFile()) await rm(path, { force: true });
  }

  async list(prefix: string, limit = 1000): Promise<string[]> {
    checkObjectPrefix(prefix);
    // Only the folder the prefix names has to be walked, not the whole store.
    const folder = prefix.slice(0, prefix.lastIndexOf('/') + 1);
    const start = join(this.keys, ...folder.split('/').filter((s) => s !== ''));
    const entries = await readdir(start, { recursive: true, withFileTypes: true }).catch(() => []);
    return entries
      .filter((e) => e.isFile())
      .map((e) => relative(this.keys, join(e.parentPath, e.name)).split(sep).join('/'))
      .filter((k) => k.startsWith(prefix))
      .sort()
      .slice(0, limit);
  }

  private pathOf(key: string): string {
    return join(this.keys, ...checkObjectKey(key).split('/'));
  }

  /** The open object file, or undefined when there is none (or the key names a folder). */
  private async openObject(key: string): Promise<FileHandle | undefined> {
    const handle = await open(this.pathOf(key), 'r').catch((error: NodeJS.ErrnoException) => {
      if (['ENOENT', 'ENOTDIR'].includes(error.code ?? '')) return undefined;
      throw error;
    });
    if (handle && !(await handle.stat()).isFile()) return void (await handle.close());
    return handle;
  }

  private prepare(): Promise<void> {
    this.ready ??= (async () => {
      await mkdir(this.keys, { recursive: true, mode: 0o700 });
      await mkdir(this.temps, { recursive: true, mode: 0o700 });
      await removeStaleTemps(this.temps);
    })().catch((error: unknown) => {
      this.ready = undefined;
      throw error;
    });
    return this.ready;
  }
}

/** A body in memory: one open, one write and one flush (a checkpoint's pack is put at every step). */
async function writeBuffer(temp: string, body: Buffer, maxBytes: number | undefined, contentType?: string): Promise<StoredObject> {
  if (maxBytes !== undefined && body.length > maxBytes) throw new PayloadTooLargeError(`object exceeds ${maxBytes} bytes`);
  const stored: StoredObject = { size: body.length, sha256: createHash('sha256').update(body).digest('hex') };
  await writeObjectFile(temp, body, { ...stored, ...(contentType ? { contentType } : {}) });
  return stored;
}

async function writeStream(temp: string, body: Readable, maxBytes: number | undefined, contentType?: string): Promise<StoredObject> {
  const counter = new CountingHash(maxBytes);
  await pipeline(body, counter, createWriteStream(temp, { flags: 'wx', mode: 0o600 }));
  const stored: StoredObject = { size: counter.size, sha256: counter.digest() };
  await finishObjectFile(temp, { ...stored, ...(contentType ? { contentType } : {}) });
  return stored;
}

function asConflict(key: string) {
  return (error: NodeJS.ErrnoException): never => {
    if (['EEXIST', 'ENOTDIR', 'EISDIR', 'ENOTEMPTY'].includes(error.code ?? '')) {
      throw new ConflictError(`object "${key}" clashes with a key that is a prefix of it, or that it is a prefix of`, { cause: error });
    }
    throw error;
  };
}

/** Makes the rename itself durable, not only the file's bytes. */
async function syncDirectory(path: string): Promise<void> {
  const handle = await open(path, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

async function removeStaleTemps(dir: string): Promise<void> {
  const cutoff = Date.now() - STALE_TEMP_MS;
  for (const name of await readdir(dir)) {
    const info = await stat(join(dir, name)).catch(() => undefined);
    if (info && info.mtimeMs < cutoff) await rm(join(dir, name), { force: true });
  }
}
