import { ReconnectBackoff } from './reconnect-backoff';

describe('ReconnectBackoff', () => {
  const withoutJitter = (b: ReconnectBackoff) => {
    const spy = jest.spyOn(Math, 'random').mockReturnValue(0);
    try {
      b.attempted();
    } finally {
      spy.mockRestore();
    }
  };

  it('keeps the delay until the next attempt, doubles it per attempt up to the cap, and starts over after a reconnect', () => {
    const backoff = new ReconnectBackoff({ initialDelayMs: 100, maxDelayMs: 1_000 });
    const delays: number[] = [backoff.delayMs()];
    for (let i = 0; i < 6; i++) {
      withoutJitter(backoff);
      delays.push(backoff.delayMs(), backoff.delayMs());
    }
    expect(delays).toEqual([100, 100, 100, 200, 200, 400, 400, 800, 800, 1_000, 1_000, 1_000, 1_000]);

    backoff.reset();
    expect(backoff.delayMs()).toBe(100);
    expect(backoff.attemptCount).toBe(0);
  });

  it('adds at most 10 % jitter, fixed between attempts', () => {
    const backoff = new ReconnectBackoff({ initialDelayMs: 1_000, maxDelayMs: 1_000 });
    backoff.attempted();
    const first = backoff.delayMs();
    expect(first).toBeGreaterThanOrEqual(1_000);
    expect(first).toBeLessThanOrEqual(1_100);
    expect(backoff.delayMs()).toBe(first);
  });
});
