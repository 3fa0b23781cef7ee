import { sandboxSettingsFromEnv } from './sandbox-settings';

describe('sandboxSettingsFromEnv: SANDBOX_SNAPSHOT_MAX_ATTEMPTS', () => {
  it('allows 4 failed idle snapshots of a task in a row by default', () => {
    expect(sandboxSettingsFromEnv({}).sessions.snapshotMaxAttempts).toBe(4);
  });

  it('takes a value from 1 to 20', () => {
    expect(sandboxSettingsFromEnv({ SANDBOX_SNAPSHOT_MAX_ATTEMPTS: '1' }).sessions.snapshotMaxAttempts).toBe(1);
    expect(sandboxSettingsFromEnv({ SANDBOX_SNAPSHOT_MAX_ATTEMPTS: '20' }).sessions.snapshotMaxAttempts).toBe(20);
  });

  it.each([
    ['0', 'SANDBOX_SNAPSHOT_MAX_ATTEMPTS must be an integer >= 1, got "0"'],
    ['2.5', 'SANDBOX_SNAPSHOT_MAX_ATTEMPTS must be an integer >= 1, got "2.5"'],
    ['many', 'SANDBOX_SNAPSHOT_MAX_ATTEMPTS must be an integer >= 1, got "many"'],
    ['21', 'SANDBOX_SNAPSHOT_MAX_ATTEMPTS must be an integer <= 20, got "21"'],
  ])('refuses %p at start, naming the variable', (value, message) => {
    expect(() => sandboxSettingsFromEnv({ SANDBOX_SNAPSHOT_MAX_ATTEMPTS: value })).toThrow(message);
  });
});
