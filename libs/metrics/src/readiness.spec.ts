import { Readiness, readinessBody } from './readiness';

describe('Readiness', () => {
  it('is ready with no dependency, and when every one answers', async () => {
    expect(await new Readiness().report()).toEqual({ ready: true, dependencies: {}, reasons: {} });
    const readiness = new Readiness();
    readiness.add('eventStore', async () => 0);
    readiness.add('bus', async () => undefined);
    const report = await readiness.report();
    expect(readinessBody(report)).toEqual({ status: 'ready', dependencies: { eventStore: 'up', bus: 'up' } });
  });

  it('names the one that fails or does not answer in time, keeping the reason out of the body', async () => {
    const readiness = new Readiness(50);
    let aborted = false;
    readiness.add('eventStore', async () => 0);
    readiness.add('bus', async () => Promise.reject(new Error('connect ECONNREFUSED 10.0.0.1:4222')));
    readiness.add('objectStore', (signal) => new Promise(() => signal.addEventListener('abort', () => (aborted = true))));
    const startedAt = Date.now();
    const report = await readiness.report();
    expect(Date.now() - startedAt).toBeLessThan(1_000);
    expect(report.ready).toBe(false);
    expect(report.reasons).toEqual({ bus: 'connect ECONNREFUSED 10.0.0.1:4222', objectStore: 'no answer within 50 ms' });
    expect(aborted).toBe(true);
    expect(readinessBody(report)).toEqual({ status: 'unavailable', dependencies: { eventStore: 'up', bus: 'down', objectStore: 'down' } });
  });

  it('replaces a check added again under the same name (modules listed twice in one process)', async () => {
    const readiness = new Readiness();
    readiness.add('objectStore', async () => Promise.reject(new Error('old')));
    readiness.add('objectStore', async () => undefined);
    expect((await readiness.report()).dependencies).toEqual({ objectStore: 'up' });
  });
});
