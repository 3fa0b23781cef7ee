import type { Readable } from 'node:stream';

/**
 * The object store port: uploads, workspace snapshots and artifacts. Adapters: local files
 * (embedded mode) and MinIO (distributed mode); both pass `testing/object-store.contract.ts`.
 */
export const OBJECT_STORE = Symbol('OBJECT_STORE');

export interface StoredObject {
  readonly size: number;
  readonly sha256: string;
}

export interface ObjectInfo extends StoredObject {
  readonly contentType?: string;
}

/** Bytes [offset, offset + length) of an object. */
export interface ByteRange {
  readonly offset: number;
  readonly length: number;
}

export interface PutOptions {
  readonly contentType?: string;
  /** Refuse (PayloadTooLargeError) and store nothing once the body passes this many bytes. */
  readonly maxBytes?: number;
}

/**
 * Keys are `/`-separated segments of `[A-Za-z0-9._-]` (no empty, `.` or `..` segment, at most 512
 * characters; see object-key.ts); any other key is refused with a ValidationError.
 */
export interface ObjectStore {
  /** Streams `body` in, all or nothing: a failed or refused put leaves no object; an overwrite is atomic. */
  put(key: string, body: Readable | Buffer, options?: PutOptions): Promise<StoredObject>;
  /**
   * A stream of the object's bytes, or of exactly `range` of them; NotFoundError when there is
   * none. A range that is not whole integers or not within the object is refused with a
   * ValidationError before any byte is streamed (`length: 0` is an empty stream).
   */
  get(key: string, range?: ByteRange): Promise<Readable>;
  stat(key: string): Promise<ObjectInfo | undefined>;
  /** Idempotent. */
  delete(key: string): Promise<void>;
  /** Keys starting with `prefix` (a folder like `a/` or any start of a key), in key order, at most `limit` (default 1000). */
  list(prefix: string, limit?: number): Promise<string[]>;
  close?(): Promise<void>;
}
