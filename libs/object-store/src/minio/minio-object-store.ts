import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import { Readable, pipeline } from 'node:stream';
import { Client, CopyDestinationOptions, CopySourceOptions, S3Error } from 'minio';
import { NotFoundError, ValidationError } from '@app/common';
import { checkRangeShape, checkRangeWithin, outOfBounds } from '../byte-range';
import { CountingHash } from '../counting-hash';
import { checkObjectKey, checkObjectPrefix } from '../object-key';
import type { ByteRange, ObjectInfo, ObjectStore, PutOptions, StoredObject } from '../object-store.port';
import { inParts } from './in-parts';
import { MultipartUpload } from './multipart-upload';

export interface MinioObjectStoreOptions {
  /** `http(s)://host:port`, no path. */
  readonly endpoint: string;
  readonly accessKey: string;
  readonly secretKey: string;
  readonly bucket: string;
}

/** Bodies up to this size go in one PUT; larger ones as parts of this size (S3's minimum is 5 MiB). */
const PART_SIZE = 8 * 1024 * 1024;
/** `~` sorts after every character a key may hold, and no key can start with it. */
const TEMP_PREFIX = '~uploads/';
/** A temp object this old belongs to a put that died with its process. */
const STALE_TEMP_MS = 60 * 60 * 1000;
const SHA256_META = 'sha256';
const DEFAULT_CONTENT_TYPE = 'application/octet-stream';
const MAX_CONTENT_TYPE = 255;
const NOT_FOUND = ['NoSuchKey', 'NotFound'];

/**
 * Objects in one MinIO bucket (created if missing), the sha256 in their user metadata. A body of
 * one part is a single PUT; a larger one is a multipart upload to a temp key, then a server-side
 * copy that sets the metadata (known only at the end) in one atomic write of the key. A refused
 * or failed body aborts the upload, so either way the key keeps its old value or gets the new
 * one. An object put without a content type reads back as application/octet-stream.
 */
export class MinioObjectStore implements ObjectStore {
  private readonly client: Client;
  private readonly agent: HttpAgent;
  private readonly bucket: string;
  private ready?: Promise<void>;

  constructor(options: MinioObjectStoreOptions) {
    const url = new URL(options.endpoint);
    const useSSL = url.protocol === 'https:';
    this.agent = useSSL ? new HttpsAgent({ keepAlive: true }) : new HttpAgent({ keepAlive: true });
    this.client = new Client({
      endPoint: url.hostname,
      port: url.port ? Number(url.port) : undefined,
      useSSL,
      accessKey: options.accessKey,
      secretKey: options.secretKey,
      pathStyle: true,
      transportAgent: this.agent,
    });
    this.bucket = options.bucket;
  }

  async put(key: string, body: Readable | Buffer, options: PutOptions = {}): Promise<StoredObject> {
    let upload: MultipartUpload | undefined;
    try {
      checkObjectKey(key);
      const contentType = checkContentType(key, options.contentType);
      const counter = new CountingHash(options.maxBytes);
      // Piped before any await, so a body that fails meanwhile has a listener for its error.
      const counted = pipeline(Buffer.isBuffer(body) ? Readable.from([body]) : body, counter, () => undefined);
      await this.prepare();
      let whole: Buffer = Buffer.alloc(0);
      for await (const { bytes, last } of inParts(counted, PART_SIZE)) {
        if (last && !upload) whole = bytes;
        else {
          upload ??= await MultipartUpload.start(this.client, this.bucket, `${TEMP_PREFIX}${randomBytes(12).toString('hex')}`);
          if (bytes.length > 0) await upload.add(bytes);
        }
      }
      const stored = { size: counter.size, sha256: counter.digest() };
      if (!upload) {
        await this.client.putObject(this.bucket, key, whole, whole.length, { 'Content-Type': contentType, [SHA256_META]: stored.sha256 });
        return stored;
      }
      await upload.complete();
      await this.client.copyObject(
        new CopySourceOptions({ Bucket: this.bucket, Object: upload.key }),
        new CopyDestinationOptions({
          Bucket: this.bucket,
          Object: key,
          MetadataDirective: 'REPLACE',
          UserMetadata: { [SHA256_META]: stored.sha256 },
          Headers: { 'Content-Type': contentType },
        }),
      );
      return stored;
    } catch (error) {
      if (!Buffer.isBuffer(body)) body.destroy();
      await upload?.abort();
      throw error;
    } finally {
      if (upload) await this.client.removeObject(this.bucket, upload.key).catch(() => undefined);
    }
  }

  async get(key: string, range?: ByteRange): Promise<Readable> {
    checkObjectKey(key);
    if (range) checkRangeShape(key, range);
    await this.prepare();
    // The client reads length 0 as "to the end", and S3 has no empty range: stat instead.
    if (range?.length === 0) {
      const info = await this.stat(key);
      if (!info) throw new NotFoundError(`object "${key}"`);
      checkRangeWithin(key, range, info.size);
      return Readable.from([]);
    }
    try {
      if (!range) return await this.client.getObject(this.bucket, key);
      return await this.getRange(key, range);
    } catch (error) {
      if (isNotFound(error)) throw new NotFoundError(`object "${key}"`);
      if (error instanceof S3Error && error.code === 'InvalidRange') throw outOfBounds(key, range!);
      throw error;
    }
  }

  /**
   * One request, no stat first: S3 answers a range past the end with fewer bytes (or 416 when it
   * starts past the end), so the response's length is the bound check, and it is the length of
   * the very version being streamed, whatever overwrite happens meanwhile.
   */
  private async getRange(key: string, range: ByteRange): Promise<Readable> {
    const response = (await this.client.getPartialObject(this.bucket, key, range.offset, range.length)) as IncomingMessage;
    if (Number(response.headers['content-length']) !== range.length) {
      response.destroy();
      throw outOfBounds(key, range);
    }
    return response;
  }

  async stat(key: string): Promise<ObjectInfo | undefined> {
    checkObjectKey(key);
    await this.prepare();
    const info = await this.client.statObject(this.bucket, key).catch((error: unknown) => {
      if (isNotFound(error)) return undefined;
      throw error;
    });
    if (!info) return undefined;
    const sha256: unknown = info.metaData[SHA256_META];
    if (typeof sha256 !== 'string') throw new Error(`object "${key}" has no ${SHA256_META} metadata: it was not written by this store`);
    const contentType: unknown = info.metaData['content-type'];
    return { size: info.size, sha256, ...(typeof contentType === 'string' ? { contentType } : {}) };
  }

  async delete(key: string): Promise<void> {
    checkObjectKey(key);
    await this.prepare();
    await this.client.removeObject(this.bucket, key);
  }

  async list(prefix: string, limit = 1000): Promise<string[]> {
    checkObjectPrefix(prefix);
    await this.prepare();
    const keys: string[] = [];
    let token = '';
    while (keys.length < limit) {
      const page = await this.client.listObjectsV2Query(this.bucket, prefix, token, '', Math.min(1000, limit - keys.length), '');
      for (const { name } of page.objects) {
        // Temp objects sort after every key, so the first one ends the listing.
        if (name === undefined || name.startsWith(TEMP_PREFIX)) return keys;
        keys.push(name);
      }
      if (!page.isTruncated || !page.nextContinuationToken) break;
      token = page.nextContinuationToken;
    }
    return keys;
  }

  async close(): Promise<void> {
    this.agent.destroy();
  }

  private prepare(): Promise<void> {
    this.ready ??= (async () => {
      if (!(await this.client.bucketExists(this.bucket))) {
        await this.client.makeBucket(this.bucket).catch((error: unknown) => {
          if (!(error instanceof S3Error && error.code === 'BucketAlreadyOwnedByYou')) throw error;
        });
      }
      await this.removeStaleTemps();
    })().catch((error: unknown) => {
      this.ready = undefined;
      throw error;
    });
    return this.ready;
  }

  /** Temp objects of puts whose process died between the upload and the copy. */
  private async removeStaleTemps(): Promise<void> {
    const cutoff = Date.now() - STALE_TEMP_MS;
    const page = await this.client.listObjectsV2Query(this.bucket, TEMP_PREFIX, '', '', 1000, '');
    const stale = page.objects.filter((o) => o.name !== undefined && o.lastModified.getTime() < cutoff);
    for (const { name } of stale) await this.client.removeObject(this.bucket, name!);
  }
}

function checkContentType(key: string, contentType: string | undefined): string {
  if (contentType === undefined) return DEFAULT_CONTENT_TYPE;
  if (contentType.length > MAX_CONTENT_TYPE || /[^\x20-\x7e]/.test(contentType)) {
    throw new ValidationError(`invalid content type for object "${key}"`);
  }
  return contentType;
}

function isNotFound(error: unknown): boolean {
  return error instanceof S3Error && NOT_FOUND.includes(error.code ?? '');
}
