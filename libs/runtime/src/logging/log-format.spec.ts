import { logFormatFromEnv } from './log-format';

describe('logFormatFromEnv', () => {
  it('is JSON when stdout is not a terminal (a pipe, a file, a collector)', () => expect(logFormatFromEnv({}, false)).toBe('json'));
  it('is pretty when stdout is a terminal', () => expect(logFormatFromEnv({}, true)).toBe('pretty'));
  it('takes the format named, whatever stdout is', () => {
    expect(logFormatFromEnv({ LOG_FORMAT: 'json' }, true)).toBe('json');
    expect(logFormatFromEnv({ LOG_FORMAT: 'Pretty' }, false)).toBe('pretty');
  });
  it('refuses another format', () =>
    expect(() => logFormatFromEnv({ LOG_FORMAT: 'xml' }, false)).toThrow(/LOG_FORMAT must be json or pretty/));
});
