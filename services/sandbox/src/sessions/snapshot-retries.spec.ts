import { SnapshotRetries } from './snapshot-retries';

describe('SnapshotRetries', () => {
  const T = 1_000;

  it('lets a task be tried at once until it has failed', () => {
    expect(new SnapshotRetries(4, T).mayTry('a', 0)).toBe(true);
  });

  it('waits the base, then twice as long after each failure, and stops after the last attempt', () => {
    const retries = new SnapshotRetries(4, T);
    expect(retries.failed('a', 0)).toEqual({ attempts: 1, retryInMs: T });
    expect([retries.mayTry('a', T - 1), retries.mayTry('a', T)]).toEqual([false, true]);
    expect(retries.failed('a', T)).toEqual({ attempts: 2, retryInMs: 2 * T });
    expect([retries.mayTry('a', 3 * T - 1), retries.mayTry('a', 3 * T)]).toEqual([false, true]);
    expect(retries.failed('a', 3 * T)).toEqual({ attempts: 3, retryInMs: 4 * T });
    expect([retries.mayTry('a', 7 * T - 1), retries.mayTry('a', 7 * T)]).toEqual([false, true]);
    expect(retries.failed('a', 7 * T)).toEqual({ attempts: 4 });
    expect(retries.mayTry('a', 1_000_000 * T)).toBe(false);
  });

  it('counts each task on its own', () => {
    const retries = new SnapshotRetries(1, T);
    retries.failed('a', 0);
    expect([retries.mayTry('a', 10 * T), retries.mayTry('b', 0)]).toEqual([false, true]);
  });

  it('gives a forgotten task (used again) its whole budget back', () => {
    const retries = new SnapshotRetries(2, T);
    retries.failed('a', 0);
    retries.failed('a', T);
    retries.forget('a');
    expect(retries.mayTry('a', T)).toBe(true);
    expect(retries.failed('a', T)).toEqual({ attempts: 1, retryInMs: T });
  });
});
