// The record a sandbox instance keeps on each task whose sandbox it holds
// (docs/operations/deployment.md "Scaling"): written only by the sandbox service, read by the
// orchestrator to notice, while a call runs there, that the holder died.

/** The coordination bucket (a NATS JetStream KV in the distributed mode) the leases live in. */
export const SANDBOX_LEASES_BUCKET = 'sandbox-leases';

export interface SandboxLease {
  /** The holding instance's id. */
  readonly owner: string;
  /** Epoch ms; pushed forward by the holder on every use and every `ttlMs`/3. */
  readonly expiresAt: number;
  /** SANDBOX_LEASE_TTL_MS of the holder (absent in leases written before it was recorded). */
  readonly ttlMs?: number;
}

export function sandboxLeaseKey(taskId: string): string {
  return `lease.${taskId}`;
}

export function parseSandboxLease(value: string): SandboxLease {
  const lease = JSON.parse(value) as Partial<SandboxLease>;
  if (typeof lease.owner !== 'string' || typeof lease.expiresAt !== 'number')
    throw new Error(`unreadable sandbox lease: ${value.slice(0, 80)}`);
  return { owner: lease.owner, expiresAt: lease.expiresAt, ...(typeof lease.ttlMs === 'number' ? { ttlMs: lease.ttlMs } : {}) };
}

/**
 * When the holder, still not renewed, counts as gone: a third of a TTL before the lease runs out,
 * that is two missed renewals. A holder cut off from the store gives the task up itself at that
 * same moment and stops its commands (SandboxLeases), so whoever sees a lease past this point
 * may treat what ran there as lost.
 */
export function sandboxLeaseGivenUpAt(lease: SandboxLease): number {
  return lease.ttlMs === undefined ? lease.expiresAt : lease.expiresAt - Math.floor(lease.ttlMs / 3);
}
