import type { MessageBus } from './bus.port';
import { BusTimeoutError, BusUnavailableError, HandlerUnavailableError, NoHandlerError, RemoteError } from './bus.port';
import { InProcessBus } from './in-process/in-process-bus';
import { requestUntilDelivered } from './request-until-delivered';

describe('requestUntilDelivered', () => {
  let bus: InProcessBus;
  beforeEach(() => (bus = new InProcessBus()));

  it('waits for a handler that is not there yet (every instance restarting)', async () => {
    const asked = requestUntilDelivered(bus, 'tools.run', { n: 1 }, { timeoutMs: 2_000, retryDelayMs: 20 });
    setTimeout(() => bus.handle('tools.run', async ({ n }: { n: number }) => ({ n: n + 1 })), 150);
    await expect(asked).resolves.toEqual({ n: 2 });
  });

  it('retries while the connection is down, and counts the attempts', async () => {
    let attempts = 0;
    const flaky: MessageBus = Object.assign(Object.create(bus), {
      request: async () => {
        attempts++;
        if (attempts < 3) throw new BusUnavailableError('tools.run', 'the NATS connection is down (reconnecting)');
        return 'ran';
      },
    });
    await expect(requestUntilDelivered(flaky, 'tools.run', {}, { timeoutMs: 2_000, retryDelayMs: 10 })).resolves.toBe('ran');
    expect(attempts).toBe(3);
  });

  it('asks again a handler that answered it did nothing (HANDLER.UNAVAILABLE), and only that one', async () => {
    let runs = 0;
    bus.handle('leased.run', async () => {
      runs++;
      if (runs < 3) throw new HandlerUnavailableError('the lease store is reconnecting');
      return 'ran';
    });
    await expect(requestUntilDelivered(bus, 'leased.run', {}, { timeoutMs: 2_000, retryDelayMs: 10 })).resolves.toBe('ran');
    expect(runs).toBe(3);
    bus.handle('never.ready', async () => {
      throw new HandlerUnavailableError('the lease store is down');
    });
    await expect(requestUntilDelivered(bus, 'never.ready', {}, { timeoutMs: 200, retryDelayMs: 20 })).rejects.toMatchObject({
      remoteCode: 'HANDLER.UNAVAILABLE',
      message: 'the lease store is down',
    });
  });

  it('gives up with the last delivery error once the budget is spent', async () => {
    const startedAt = Date.now();
    await expect(requestUntilDelivered(bus, 'nobody.listens', {}, { timeoutMs: 300, retryDelayMs: 20 })).rejects.toBeInstanceOf(
      NoHandlerError,
    );
    expect(Date.now() - startedAt).toBeLessThan(1_000);
  });

  it('never repeats a request that may have been handled: a timeout or a handler error ends it', async () => {
    let runs = 0;
    bus.handle('slow', () => (runs++, new Promise(() => undefined)));
    await expect(requestUntilDelivered(bus, 'slow', {}, { timeoutMs: 100 })).rejects.toBeInstanceOf(BusTimeoutError);
    bus.handle('broken', async () => {
      runs++;
      throw new Error('tool crashed');
    });
    await expect(requestUntilDelivered(bus, 'broken', {}, { timeoutMs: 1_000 })).rejects.toBeInstanceOf(RemoteError);
    expect(runs).toBe(2);
  });

  it('stops retrying once the caller aborts', async () => {
    const controller = new AbortController();
    const asked = requestUntilDelivered(bus, 'nobody.listens', {}, { timeoutMs: 5_000, retryDelayMs: 20, signal: controller.signal });
    setTimeout(() => controller.abort(), 50);
    await expect(asked).rejects.toBeInstanceOf(NoHandlerError);
  });
});
