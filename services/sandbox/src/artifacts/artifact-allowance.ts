import type { StoredArtifacts } from '@app/task-domain';

/**
 * What the object store may still take for one task during one scan: SANDBOX_DISK_QUOTA_BYTES
 * less every object the task's events recorded and every one this scan added. Objects are
 * counted by key exactly as the task state's fold counts them (StoredArtifacts), so once the
 * scan's records are events, the task's total is still within the quota.
 */
export class ArtifactAllowance {
  private readonly held: Map<string, number>;
  private readonly heldSizes: Set<number>;
  private bytes: number;

  constructor(
    readonly quotaBytes: number,
    stored: StoredArtifacts,
  ) {
    this.held = new Map(Object.entries(stored.objects));
    this.heldSizes = new Set(this.held.values());
    this.bytes = stored.bytes;
  }

  get leftBytes(): number {
    return Math.max(0, this.quotaBytes - this.bytes);
  }

  /**
   * Whether a file of `size` bytes is worth reading (hashing) at all: it fits, or it is exactly as
   * long as an object already held, so it may be those very bytes (a touched, copied or moved
   * artifact), which cost nothing. Reading is bounded either way by a size the quota allowed.
   */
  mayHold(size: number): boolean {
    return size <= this.leftBytes || this.heldSizes.has(size);
  }

  /** Whether the object may be kept: already held (free), or it fits in what is left. */
  fits(objectKey: string, size: number): boolean {
    return this.held.has(objectKey) || size <= this.leftBytes;
  }

  /** Counts a kept object (once, however many files hold its bytes). */
  take(objectKey: string, size: number): void {
    if (this.held.has(objectKey)) return;
    this.held.set(objectKey, size);
    this.heldSizes.add(size);
    this.bytes += size;
  }
}
