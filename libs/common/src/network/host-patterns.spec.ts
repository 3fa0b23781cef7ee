import { matchesHostPatterns, parseHostPatterns } from './host-patterns';

describe('host patterns (network.allow, SANDBOX_EGRESS_ALLOW)', () => {
  const matches = (patterns: string[], host: string, port: number) => matchesHostPatterns(parseHostPatterns(patterns, 'test'), host, port);

  it.each([
    [['*'], 'pypi.org', 443, true],
    [['*:443'], 'pypi.org', 443, true],
    [['*:443'], 'pypi.org', 80, false],
    [['pypi.org'], 'PyPI.org', 443, true],
    [['pypi.org'], 'files.pypi.org', 443, false],
    [['*.pythonhosted.org'], 'files.pythonhosted.org', 443, true],
    [['*.pythonhosted.org'], 'pythonhosted.org', 443, false],
    [['*.pythonhosted.org'], 'evilpythonhosted.org', 443, false],
    [['registry.npmjs.org:443'], 'registry.npmjs.org', 80, false],
    [['registry.npmjs.org:443'], 'registry.npmjs.org', 443, true],
    [[], 'pypi.org', 443, false],
  ])('%j lets %s:%d out: %s', (patterns, host, port, expected) => {
    expect(matches(patterns, host, port)).toBe(expected);
  });

  it.each([
    '',
    'http://pypi.org',
    'pypi.org/simple',
    '*pypi.org',
    'a..b',
    'pypi.org:0',
    'pypi.org:70000',
    '-x.org',
    `${'a'.repeat(250)}.org`,
  ])('refuses %j, naming the field', (pattern) => {
    expect(() => parseHostPatterns([pattern], 'network.allow')).toThrow(/^network\.allow: ".*" is not a host pattern/);
  });
});
