import { leastSevereOf, logLevelFromEnv } from './log-level';

describe('logLevelFromEnv', () => {
  it('is log by default', () => expect(logLevelFromEnv({})).toBe('log'));
  it('takes the level named', () => expect(logLevelFromEnv({ LOG_LEVEL: 'warn' })).toBe('warn'));
  it("takes pino's names for log and verbose", () => {
    expect(logLevelFromEnv({ LOG_LEVEL: 'info' })).toBe('log');
    expect(logLevelFromEnv({ LOG_LEVEL: 'TRACE' })).toBe('verbose');
  });
  it('refuses an unknown level, naming the known ones', () =>
    expect(() => logLevelFromEnv({ LOG_LEVEL: 'loud' })).toThrow(/LOG_LEVEL must be one of fatal, error/));
});

describe('leastSevereOf', () => {
  it('picks the least severe level of a list', () => expect(leastSevereOf(['error', 'debug', 'warn'])).toBe('debug'));
  it('is fatal for an empty list', () => expect(leastSevereOf([])).toBe('fatal'));
});
