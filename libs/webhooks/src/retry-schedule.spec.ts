import { MAX_RETRY_DELAY_MS, retryDelayMs } from './retry-schedule';

describe('retryDelayMs', () => {
  const policy = { retryBaseMs: 1_000, maxAttempts: 8 };
  const noJitter = () => 0;

  it('doubles the base wait after each failed attempt', () => {
    const waits = [1, 2, 3, 4, 5, 6, 7].map((attempt) => retryDelayMs(attempt, policy, noJitter));
    expect(waits).toEqual([1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 64_000]);
  });

  it('stops after WEBHOOK_MAX_ATTEMPTS attempts', () => {
    expect(retryDelayMs(8, policy, noJitter)).toBeUndefined();
    expect(retryDelayMs(9, policy, noJitter)).toBeUndefined();
    expect(retryDelayMs(1, { retryBaseMs: 1_000, maxAttempts: 1 }, noJitter)).toBeUndefined();
  });

  it('adds up to 20% jitter, never waiting less than the schedule says', () => {
    expect(retryDelayMs(3, policy, () => 0.999_999)).toBe(4_800);
    expect(retryDelayMs(3, policy, () => 0.5)).toBe(4_400);
    for (let i = 0; i < 200; i++) {
      const wait = retryDelayMs(2, policy)!;
      expect(wait).toBeGreaterThanOrEqual(2_000);
      expect(wait).toBeLessThanOrEqual(2_400);
    }
  });

  it('spreads the retries of many messages rather than sending them together', () => {
    const waits = new Set(Array.from({ length: 50 }, () => retryDelayMs(4, policy)));
    expect(waits.size).toBeGreaterThan(10);
  });

  it('never waits longer than a day, whatever the settings multiply out to', () => {
    const generous = { retryBaseMs: 60_000, maxAttempts: 100 };
    expect(retryDelayMs(60, generous, () => 0.999)).toBe(MAX_RETRY_DELAY_MS);
    expect(retryDelayMs(99, generous, noJitter)).toBe(MAX_RETRY_DELAY_MS);
  });

  it('refuses an attempt number that is not a positive integer', () => {
    expect(() => retryDelayMs(0, policy)).toThrow(RangeError);
    expect(() => retryDelayMs(1.5, policy)).toThrow(RangeError);
  });
});
