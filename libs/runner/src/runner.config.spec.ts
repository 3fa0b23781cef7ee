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
    });
  });

  it('rejects RUNNER=temporal without TEMPORAL_ADDRESS', () => {
    expect(() => runnerConfigFromEnv({ RUNNER: 'temporal' })).toThrow(/TEMPORAL_ADDRESS/);
  });

  it('rejects an unknown runner', () => {
    expect(() => runnerConfigFromEnv({ RUNNER: 'temporall' })).toThrow(/RUNNER must be/);
  });
});
