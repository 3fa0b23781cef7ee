import type { ArtifactRecord } from '../task.events';

/**
 * What the artifact store holds for a task, as its events tell: every object an ArtifactRecorded
 * named, each counted once. This total is what SANDBOX_DISK_QUOTA_BYTES bounds (docs/api.md,
 * "Limits and budgets").
 *
 * Why once: an object's key is its content's SHA-256 within the task (`artifacts/<task>/<sha256>`),
 * so the same bytes recorded again (a copy, a move, a touched file, a file put back) are the same
 * object, which the store keeps once: they cost nothing more. Why removal frees nothing: an
 * ArtifactRemoved drops the path from the task's list, but nothing deletes the object, so the
 * store still holds its bytes.
 */
export interface StoredArtifacts {
  /** Each object's size in bytes, by object key. */
  readonly objects: Readonly<Record<string, number>>;
  /** The sum of those sizes. */
  readonly bytes: number;
}

export const NOTHING_STORED: StoredArtifacts = { objects: {}, bytes: 0 };

export function withStoredObject(stored: StoredArtifacts, record: Pick<ArtifactRecord, 'objectKey' | 'size'>): StoredArtifacts {
  if (stored.objects[record.objectKey] !== undefined) return stored;
  return { objects: { ...stored.objects, [record.objectKey]: record.size }, bytes: stored.bytes + record.size };
}
