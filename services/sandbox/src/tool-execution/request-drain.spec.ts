import { HandlerUnavailableError } from '@app/bus';
import { RequestDrain } from './request-drain';

/** A promise settled from outside, standing in for a request's work. */
function deferred<T = void>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

describe('RequestDrain', () => {
  it('waits for a request that is still waiting to start (a lock, a restore), then refuses it its work', async () => {
    const drain = new RequestDrain();
    const lock = deferred();
    const ran: string[] = [];
    const handler = drain.track(async (id: string) => {
      await lock.promise; // the task's session lock, held by another call
      drain.assertAccepting(`call ${id}`);
      ran.push(id);
    });
    const request = handler('c1');
    request.catch(() => undefined);

    let drained = false;
    const draining = drain.drain(10_000).then((outcome) => {
      drained = true;
      return outcome;
    });
    await new Promise((r) => setTimeout(r, 20));
    expect(drained).toBe(false); // the request has not settled: the leases must still be held

    lock.resolve();
    await expect(request).rejects.toBeInstanceOf(HandlerUnavailableError);
    await expect(draining).resolves.toBe('finished');
    expect(ran).toEqual([]);
    expect(drain.size).toBe(0);
  });

  it('lets a request already running finish within the grace time', async () => {
    const drain = new RequestDrain();
    const work = deferred<string>();
    const request = drain.track(() => work.promise)(undefined);
    const draining = drain.drain(10_000);
    setTimeout(() => work.resolve('done'), 20);
    await expect(request).resolves.toBe('done');
    await expect(draining).resolves.toBe('finished');
  });

  it('says "late" once the grace time runs out, without waiting for what still runs', async () => {
    const drain = new RequestDrain();
    const work = deferred();
    // Left running on purpose: the drain must give up on it.
    void drain.track(() => work.promise)(undefined);
    const started = Date.now();
    await expect(drain.drain(30)).resolves.toBe('late');
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(drain.size).toBe(1); // still running: the caller stops it
    work.resolve();
  });

  it('finishes at once with nothing to wait for, and refuses work from then on', async () => {
    const drain = new RequestDrain();
    expect(() => drain.assertAccepting('before')).not.toThrow();
    await expect(drain.drain(10_000)).resolves.toBe('finished');
    expect(() => drain.assertAccepting('call c9')).toThrow(/shutting down \(call c9\)/);
  });

  it('forgets a request that failed', async () => {
    const drain = new RequestDrain();
    await expect(
      drain.track(async () => {
        throw new Error('boom');
      })(undefined),
    ).rejects.toThrow('boom');
    expect(drain.size).toBe(0);
  });
});
