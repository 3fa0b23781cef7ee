import { Logger } from '@nestjs/common';
import { HandlerUnavailableError, NoHandlerError, RemoteError } from '@app/bus';
import type { LeaseOutcome, SandboxLeases } from './sandbox-leases';

/** The holder cannot take the request: the task's sandbox moved on while it was being forwarded. */
export class SandboxMovedError extends Error {
  readonly code = 'SANDBOX.MOVED';
  constructor(taskId: string) {
    super(`the sandbox of ${taskId} is held by another instance`);
  }
}

/** Forwarded requests that found the sandbox moved again are retried this many times. */
const MAX_HOPS = 5;

/**
 * Where a task's operations run in a cluster of sandbox instances: on the one instance holding
 * the task's lease. A request that lands on another instance is forwarded to the holder's own
 * subject; when the holder has vanished (no responder), the request waits for its lease to run
 * out and this instance takes the task over (restoring it from its snapshot if it must).
 */
export class TaskPlacement {
  private readonly logger = new Logger('TaskPlacement');

  constructor(private readonly leases: SandboxLeases) {}

  get instanceId(): string {
    return this.leases.instanceId;
  }

  /** Runs `here` when this instance holds (or takes) the task's sandbox, else `forward`s to the holder. */
  async route<T>(taskId: string, here: () => Promise<T>, forward: (holder: string) => Promise<T>): Promise<T> {
    for (let hop = 0; ; hop++) {
      const lease = await this.lease(taskId);
      if (lease.held) return here();
      try {
        return await forward(lease.owner);
      } catch (error) {
        // The holder could not reach its lease store either: nothing ran there, so the requester may ask again.
        if (error instanceof RemoteError && error.remoteCode === HandlerUnavailableError.CODE) {
          throw new HandlerUnavailableError(error.message, { cause: error });
        }
        const vanished = error instanceof NoHandlerError;
        const moved = (error as { remoteCode?: string }).remoteCode === 'SANDBOX.MOVED';
        if ((!vanished && !moved) || hop >= MAX_HOPS) throw error;
        if (vanished) {
          const waitMs = Math.max(0, lease.expiresAt - Date.now()) + 50;
          this.logger.warn(
            `the instance holding ${taskId}'s sandbox (${lease.owner}) is gone; taking it over in ${waitMs} ms, when its lease runs out`,
          );
          await new Promise((resolve) => setTimeout(resolve, waitMs));
        }
      }
    }
  }

  /** For a request forwarded here: runs `here` only while this instance holds the task's sandbox. */
  async onlyHere<T>(taskId: string, here: () => Promise<T>): Promise<T> {
    const lease = await this.lease(taskId);
    if (!lease.held) throw new SandboxMovedError(taskId);
    return here();
  }

  /**
   * The task's lease, before anything runs. The store being unreachable (NATS restarting, its
   * JetStream not ready yet) is answered as HandlerUnavailableError: certainly nothing ran, so
   * the requester asks again instead of reporting the call as failed.
   */
  private async lease(taskId: string): Promise<LeaseOutcome> {
    try {
      return await this.leases.acquire(taskId);
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      throw new HandlerUnavailableError(`the sandbox lease of ${taskId} cannot be taken now: ${reason}`, { cause: error });
    }
  }
}
