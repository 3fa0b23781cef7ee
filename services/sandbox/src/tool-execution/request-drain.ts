import { HandlerUnavailableError } from '@app/bus';

/**
 * The requests an instance is handling, from their arrival, so that a shutdown lets every one of
 * them finish before it gives up what they rely on (the sandbox's task leases): a call still
 * waiting for its task's session lock, or for the workspace's restore, has not started its command
 * yet but will. Once draining, a request about to start work is refused as HandlerUnavailable
 * instead (nothing ran), which its sender's requestUntilDelivered sends again, to an instance
 * that is staying.
 */
export class RequestDrain {
  private readonly handling = new Set<Promise<unknown>>();
  private draining = false;

  /** The same handler, its runs tracked until they settle. */
  track<R, T>(handler: (request: R) => Promise<T>): (request: R) => Promise<T> {
    return (request) => {
      const run = handler(request);
      this.handling.add(run);
      const forget = () => void this.handling.delete(run);
      run.then(forget, forget);
      return run;
    };
  }

  /** Requests being handled now. */
  get size(): number {
    return this.handling.size;
  }

  /** Throws HandlerUnavailableError once draining; called where a request would start its work. */
  assertAccepting(what: string): void {
    if (this.draining) throw new HandlerUnavailableError(`not run: this sandbox instance is shutting down (${what}); ask again`);
  }

  /**
   * Refuses new work, and waits for the requests being handled, at most `graceMs`: says whether
   * they all finished, or the grace time ran out first. Not longer: past it, what runs here is
   * the caller's to stop, and a request forwarded to another instance is not this one's to wait for.
   */
  async drain(graceMs: number): Promise<'finished' | 'late'> {
    this.draining = true;
    if (this.handling.size === 0) return 'finished';
    const settled = (async () => {
      // Requests tracked while waiting (a handler that was mid-arrival) are waited for too.
      while (this.handling.size > 0) await Promise.allSettled([...this.handling]);
      return 'finished' as const;
    })();
    let timer: NodeJS.Timeout | undefined;
    const grace = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), graceMs)));
    const outcome = await Promise.race([settled, grace]);
    clearTimeout(timer);
    return outcome;
  }
}
