/**
 * A small shared key-value store with compare-and-set, for what several instances of a service
 * must agree on (a tenant's request count, which sandbox instance holds a task). In-memory
 * adapter for the all-in-one mode; NATS JetStream KV for the distributed mode. Both pass
 * `testing/coordination.contract.ts`. Keys are dotted words of `[A-Za-z0-9_-]`.
 */
export interface CoordinationStore {
  get(key: string): Promise<VersionedValue | undefined>;
  /** Writes `key` only if it holds nothing; its revision, or undefined when it already exists. */
  create(key: string, value: string): Promise<number | undefined>;
  /** Replaces `key` only while it is at `revision`; the new revision, or undefined when it moved on. */
  update(key: string, value: string, revision: number): Promise<number | undefined>;
  /** Removes `key` if it is (still) at `revision`; true when this call removed it. */
  delete(key: string, revision: number): Promise<boolean>;
  close(): Promise<void>;
}

export interface VersionedValue {
  readonly value: string;
  /** Changes on every write; what `update` and `delete` compare against. */
  readonly revision: number;
}

export interface CoordinationStoreOptions {
  /** The bucket: one store per purpose, e.g. `rate-limits`. */
  readonly bucket: string;
  /** A key not written for this long is gone (omit: kept until deleted). */
  readonly ttlMs?: number;
}

export const COORDINATION_KEY = /^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/;

export function assertCoordinationKey(key: string): void {
  if (!COORDINATION_KEY.test(key) || key.length > 256) throw new Error(`invalid coordination key "${key.slice(0, 80)}"`);
}
