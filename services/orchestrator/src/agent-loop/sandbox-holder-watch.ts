import { Logger } from '@nestjs/common';
import { parseSandboxLease, sandboxLeaseGivenUpAt, sandboxLeaseKey } from '@app/contracts';
import type { CoordinationStore } from '@app/coordination';

/** How often a running call's lease is read: a lost holder is noticed within this of the moment it counts as gone. */
export const HOLDER_POLL_MS = 1_000;

export interface HolderWatch {
  /** Settles, with why, only if the instance seen holding the task's sandbox stops renewing its lease. */
  readonly lost: Promise<string>;
  stop(): void;
}

/**
 * Watches, while a tool call runs, the lease of the sandbox instance that holds the task
 * (libs/contracts sandbox-lease.ts). An instance that dies (kill -9, a lost host) sends no reply;
 * without this the call would wait TOOL_TIMEOUT_MS (10 minutes by default). Its lease is no
 * longer renewed, so two missed renewals after its death (10 s with the default 15 s TTL) the
 * watch says the holder is lost, and the call ends as an error at once.
 *
 * Only a holder seen alive during this call counts: a lease left stale by an instance that died
 * earlier, before another took the task over for this call, is not this call's holder. A lease
 * released and taken by another instance (a rolling restart hands its tasks over after draining
 * them) is not a loss either. A read that fails (the store reconnecting) decides nothing.
 */
export class SandboxHolderWatch {
  private readonly logger = new Logger('SandboxHolderWatch');

  constructor(
    private readonly leases: Promise<CoordinationStore>,
    private readonly pollMs = HOLDER_POLL_MS,
    private readonly now: () => number = Date.now,
  ) {
    // Opening the store may fail (NATS down at start): each read then fails and decides nothing.
    leases.catch(() => undefined);
  }

  watch(taskId: string): HolderWatch {
    let timer: NodeJS.Timeout | undefined;
    let stopped = false;
    let seenAlive: string | undefined;
    let declare!: (why: string) => void;
    const lost = new Promise<string>((resolve) => (declare = resolve));
    const look = async (): Promise<void> => {
      const lease = await this.read(taskId);
      if (stopped) return;
      if (lease === null) seenAlive = undefined;
      else if (lease !== undefined && this.now() < sandboxLeaseGivenUpAt(lease)) seenAlive = lease.owner;
      else if (lease !== undefined && lease.owner === seenAlive) {
        const silentFor = lease.ttlMs === undefined ? undefined : this.now() - (lease.expiresAt - lease.ttlMs);
        this.logger.warn(
          `task ${taskId}: sandbox instance ${lease.owner} stopped renewing its lease` +
            (silentFor === undefined ? '' : ` (last renewed ${Math.round(silentFor / 1000)} s ago)`) +
            ': the call running there is lost',
        );
        return declare('the sandbox instance running it was lost (it stopped renewing its hold on the task)');
      }
      timer = setTimeout(() => void look(), this.pollMs);
      timer.unref();
    };
    void look();
    return {
      lost,
      stop: () => {
        stopped = true;
        clearTimeout(timer);
      },
    };
  }

  async close(): Promise<void> {
    await (await this.leases.catch(() => undefined))?.close();
  }

  /** The lease; null when nobody holds the task; undefined when it could not be read this time. */
  private async read(taskId: string) {
    try {
      const entry = await (await this.leases).get(sandboxLeaseKey(taskId));
      return entry ? parseSandboxLease(entry.value) : null;
    } catch (error) {
      this.logger.debug(`task ${taskId}: sandbox lease not readable now: ${error instanceof Error ? error.message : String(error)}`);
      return undefined;
    }
  }
}
