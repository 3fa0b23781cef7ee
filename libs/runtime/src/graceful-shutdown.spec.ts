import type { INestApplicationContext } from '@nestjs/common';
import { Logger } from '@nestjs/common';
import { Readiness } from '@app/metrics';
import { shutdownHandler } from './graceful-shutdown';

/** An app whose close() resolves when the test says so; get() hands out its Readiness. */
function fakeApp() {
  const readiness = new Readiness();
  readiness.add('eventStore', async () => undefined);
  let finishClose!: () => void;
  let failClose!: (error: Error) => void;
  const closing = new Promise<void>((resolve, reject) => {
    finishClose = resolve;
    failClose = reject;
  });
  const close = jest.fn(() => closing);
  const app = { get: () => readiness, close } as unknown as INestApplicationContext;
  return { app, readiness, close, finishClose, failClose };
}

const flush = () => new Promise((resolve) => setImmediate(resolve));

describe('shutdownHandler', () => {
  beforeAll(() => Logger.overrideLogger(false));
  afterAll(() => Logger.overrideLogger(['log', 'error', 'warn']));

  it('turns readiness down at once, closes the app, and exits 0 when closing finishes', async () => {
    const { app, readiness, close, finishClose } = fakeApp();
    const exit = jest.fn();
    shutdownHandler(app, { name: 'test', timeoutMs: 10_000, exit })('SIGTERM');
    expect(await readiness.report()).toMatchObject({ ready: false, dependencies: { eventStore: 'up', shutdown: 'down' } });
    await flush();
    expect(close).toHaveBeenCalledTimes(1);
    expect(exit).not.toHaveBeenCalled();
    finishClose();
    await flush();
    expect(exit).toHaveBeenCalledWith(0);
  });

  it('closes what takes work (the HTTP server) first, then the app', async () => {
    const { app, close, finishClose } = fakeApp();
    const order: string[] = [];
    close.mockImplementation(async () => void order.push('app'));
    const exit = jest.fn();
    let finishHttp!: () => void;
    const closeFirst = () => new Promise<void>((resolve) => (finishHttp = resolve)).then(() => void order.push('http'));
    shutdownHandler(app, { name: 'test', timeoutMs: 10_000, exit, closeFirst })('SIGTERM');
    await flush();
    expect(close).not.toHaveBeenCalled();
    finishHttp();
    finishClose();
    await flush();
    expect(order).toEqual(['http', 'app']);
    expect(exit).toHaveBeenCalledWith(0);
  });

  it('forces exit 1 when closing outlasts SHUTDOWN_TIMEOUT_MS', async () => {
    jest.useFakeTimers();
    try {
      const { app } = fakeApp();
      const exit = jest.fn();
      shutdownHandler(app, { name: 'test', timeoutMs: 5_000, exit })('SIGTERM');
      jest.advanceTimersByTime(4_999);
      expect(exit).not.toHaveBeenCalled();
      jest.advanceTimersByTime(1);
      expect(exit).toHaveBeenCalledWith(1);
    } finally {
      jest.useRealTimers();
    }
  });

  it('exits 1 at once on a second signal, and when closing fails', async () => {
    const first = fakeApp();
    const exitFirst = jest.fn();
    const handler = shutdownHandler(first.app, { name: 'test', timeoutMs: 10_000, exit: exitFirst });
    handler('SIGTERM');
    handler('SIGINT');
    expect(exitFirst).toHaveBeenCalledWith(1);
    await flush();
    expect(first.close).toHaveBeenCalledTimes(1);
    first.finishClose();

    const second = fakeApp();
    const exitSecond = jest.fn();
    shutdownHandler(second.app, { name: 'test', timeoutMs: 10_000, exit: exitSecond })('SIGTERM');
    second.failClose(new Error('store would not close'));
    await flush();
    expect(exitSecond).toHaveBeenCalledWith(1);
  });
});
