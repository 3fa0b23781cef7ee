import { HandlerUnavailableError, RemoteError, requestUntilDelivered } from '@app/bus';
import { InProcessBus } from '@app/bus/in-process/in-process-bus';
import type { CoordinationStore } from '@app/coordination';
import { InMemoryCoordinationStore } from '@app/coordination/in-memory/in-memory-coordination-store';
import { SandboxLeases } from './sandbox-leases';
import { TaskPlacement } from './task-placement';

const TASK = 'task_0123456789abcdef0123456789abcdef';

/** A lease store that is down (NATS restarting) until `up` is set. */
function storeDownUntil(up: () => boolean): CoordinationStore {
  const inner = new InMemoryCoordinationStore({ bucket: 'sandbox-leases' });
  const down = () => Promise.reject(new Error('TIMEOUT: JetStream is not ready'));
  return {
    get: (key) => (up() ? inner.get(key) : down()),
    create: (key, value) => (up() ? inner.create(key, value) : down()),
    update: (key, value, revision) => (up() ? inner.update(key, value, revision) : down()),
    delete: (key, revision) => (up() ? inner.delete(key, revision) : down()),
    close: () => inner.close(),
  };
}

describe('TaskPlacement: where a call runs when the lease store is unreachable', () => {
  it('answers HandlerUnavailableError without running anything', async () => {
    const placement = new TaskPlacement(
      new SandboxLeases(
        storeDownUntil(() => false),
        'sbxa',
        9_000,
      ),
    );
    const here = jest.fn(async () => 'ran');
    const forward = jest.fn(async () => 'forwarded');
    await expect(placement.route(TASK, here, forward)).rejects.toBeInstanceOf(HandlerUnavailableError);
    await expect(placement.onlyHere(TASK, here)).rejects.toBeInstanceOf(HandlerUnavailableError);
    expect(here).not.toHaveBeenCalled();
    expect(forward).not.toHaveBeenCalled();
  });

  it('passes on, as HandlerUnavailableError, a holder that could not reach the store either', async () => {
    const store = new InMemoryCoordinationStore({ bucket: 'sandbox-leases' });
    await new SandboxLeases(store, 'sbxb', 9_000).acquire(TASK);
    const placement = new TaskPlacement(new SandboxLeases(store, 'sbxa', 9_000));
    const holderUnavailable = new RemoteError('sandbox.sbxb.execute', HandlerUnavailableError.CODE, 'the lease store is down');
    await expect(
      placement.route(
        TASK,
        async () => 'ran here',
        async () => Promise.reject(holderUnavailable),
      ),
    ).rejects.toBeInstanceOf(HandlerUnavailableError);
  });

  it('lets a requester through the bus run the call once the store is back, exactly once', async () => {
    let storeUp = false;
    const placement = new TaskPlacement(
      new SandboxLeases(
        storeDownUntil(() => storeUp),
        'sbxa',
        9_000,
      ),
    );
    const bus = new InProcessBus();
    let runs = 0;
    bus.handle('sandbox.execute', () =>
      placement.route(
        TASK,
        async () => ++runs,
        async () => Promise.reject(new Error('no other instance')),
      ),
    );
    setTimeout(() => (storeUp = true), 150);
    await expect(requestUntilDelivered(bus, 'sandbox.execute', {}, { timeoutMs: 5_000, retryDelayMs: 20 })).resolves.toBe(1);
    expect(runs).toBe(1);
    await bus.close();
  });
});
