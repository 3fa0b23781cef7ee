import { logLevelsFromEnv } from './log-levels';

describe('logLevelsFromEnv', () => {
  it('prints log, warn, error and fatal by default', () => expect(logLevelsFromEnv({})).toEqual(['fatal', 'error', 'warn', 'log']));
  it('prints every more severe level with the one named', () =>
    expect(logLevelsFromEnv({ LOG_LEVEL: 'warn' })).toEqual(['fatal', 'error', 'warn']));
  it('prints everything at verbose', () => expect(logLevelsFromEnv({ LOG_LEVEL: 'verbose' })).toHaveLength(6));
  it('refuses a level it does not know, naming the valid ones', () =>
    expect(() => logLevelsFromEnv({ LOG_LEVEL: 'loud' })).toThrow(/LOG_LEVEL must be one of fatal, error/));
});
