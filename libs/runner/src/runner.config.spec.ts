import { runnerConfigFromEnv } from './runner.config';

describe('runnerConfigFromEnv', () => {
  it('runs loops in process when RUNNER is unset', () => {
    expect(runnerConfigFromEnv({})).toEqual({ kind: 'in-process' });
  });

  it('reads the Temporal address, with namespace and task queue defaults', () => {
    expect(runnerConfigFromEnv({ RUNNER: 'temporal', TEMPORAL_ADDRESS: 'temporal:7233' })).toEqual({
      kind: 'temporal',
      address: 'temporal:7233',
      namespace: 'default',
      taskQueue: 'agent-loop',
      shutdownGraceMs: 7_000,
    });
  });

  it('gives a step on a worker shutting down SHUTDOWN_TIMEOUT_MS less 3 s, or half of it when that is more', () => {
    const grace = (timeout: string) =>
      runnerConfigFromEnv({ RUNNER: 'temporal', TEMPORAL_ADDRESS: 't:7233', SHUTDOWN_TIMEOUT_MS: timeout });
    expect(grace('30000')).toMatchObject({ shutdownGraceMs: 27_000 });
    expect(grace('4000')).toMatchObject({ shutdownGraceMs: 2_000 });
  });

  it('rejects a SHUTDOWN_TIMEOUT_MS under a second or not an integer', () => {
    const env = { RUNNER: 'temporal', TEMPORAL_ADDRESS: 't:7233' };
    expect(() => runnerConfigFromEnv({ ...env, SHUTDOWN_TIMEOUT_MS: '999' })).toThrow(/SHUTDOWN_TIMEOUT_MS must be an integer >= 1000/);
    expect(() => runnerConfigFromEnv({ ...env, SHUTDOWN_TIMEOUT_MS: '5s' })).toThrow(/SHUTDOWN_TIMEOUT_MS/);
    // Past setTimeout's range Node would fire the bound after 1 ms: every shutdown forced at once.
    expect(() => runnerConfigFromEnv({ ...env, SHUTDOWN_TIMEOUT_MS: '3000000000' })).toThrow(
      /SHUTDOWN_TIMEOUT_MS must be an integer <= 2147483647/,
    );
  });

  it('rejects RUNNER=temporal without TEMPORAL_ADDRESS', () => {
    expect(() => runnerConfigFromEnv({ RUNNER: 'temporal' })).toThrow(/TEMPORAL_ADDRESS/);
  });

  it('rejects an unknown runner', () => {
    expect(() => runnerConfigFromEnv({ RUNNER: 'temporall' })).toThrow(/RUNNER must be/);
  });
});
