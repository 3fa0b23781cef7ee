import { allowListKey, parseAllowHosts, webFetchConfigFromEnv } from './web-fetch.config';

describe('webFetchConfigFromEnv', () => {
  it('uses the documented defaults when nothing is set', () => {
    expect(webFetchConfigFromEnv({})).toEqual({
      allowHosts: new Set(),
      maxBytes: 2 * 1024 * 1024,
      timeoutMs: 15_000,
      maxRedirects: 5,
      maxOutputChars: 100_000,
    });
  });

  it('reads every setting from its variable', () => {
    const config = webFetchConfigFromEnv({
      WEB_FETCH_ALLOW_HOSTS: 'localhost:8080',
      WEB_FETCH_MAX_BYTES: '1000',
      WEB_FETCH_TIMEOUT_MS: '250',
      WEB_FETCH_MAX_REDIRECTS: '0',
      WEB_FETCH_MAX_OUTPUT_CHARS: '500',
    });
    expect(config).toEqual({
      allowHosts: new Set(['localhost:8080']),
      maxBytes: 1000,
      timeoutMs: 250,
      maxRedirects: 0,
      maxOutputChars: 500,
    });
  });

  it.each([
    ['WEB_FETCH_MAX_BYTES', '0'],
    ['WEB_FETCH_TIMEOUT_MS', 'soon'],
    ['WEB_FETCH_MAX_REDIRECTS', '-1'],
    ['WEB_FETCH_MAX_OUTPUT_CHARS', '1.5'],
  ])('refuses %s=%s naming the variable', (name, value) => {
    expect(() => webFetchConfigFromEnv({ [name]: value })).toThrow(name);
  });
});

describe('parseAllowHosts', () => {
  it('normalises entries as the URL parser does, so they match fetched URLs', () => {
    expect(parseAllowHosts(' LocalHost:8080, [0::1]:3000 ,127.1:80,,wiki.internal:443 ')).toEqual(
      new Set(['localhost:8080', '[::1]:3000', '127.0.0.1:80', 'wiki.internal:443']),
    );
  });

  it('is empty for an empty or blank value', () => {
    expect(parseAllowHosts('')).toEqual(new Set());
    expect(parseAllowHosts(' , ')).toEqual(new Set());
  });

  it.each([
    ['localhost', 'must be host:port'],
    ['http://localhost:8080', 'must be host:port'],
    ['user@localhost:8080', 'must be host:port'],
    ['localhost:80/path', 'must be host:port'],
    ['::1:8080', 'must be host:port'],
    ['localhost:0', 'outside 1-65535'],
    ['localhost:70000', 'outside 1-65535'],
    ['[::g]:80', 'must be host:port'],
    ['[1::2::3]:80', 'does not name a valid host'],
    ['exa%mple.com:80', 'does not name a valid host'],
  ])('refuses %s: %s', (entry, message) => {
    expect(() => parseAllowHosts(`ok.example:80,${entry}`)).toThrow(`WEB_FETCH_ALLOW_HOSTS entry "${entry}"`);
    expect(() => parseAllowHosts(entry)).toThrow(message);
  });
});

describe('allowListKey', () => {
  it('defaults the port from the scheme and writes the host as parseAllowHosts does', () => {
    expect(allowListKey(new URL('https://Docs.Example/a'))).toBe('docs.example:443');
    expect(allowListKey(new URL('http://docs.example/a'))).toBe('docs.example:80');
    expect(allowListKey(new URL('http://[0:0::1]:8080/'))).toBe('[::1]:8080');
    expect(parseAllowHosts('[::1]:8080').has(allowListKey(new URL('http://[::1]:8080/x')))).toBe(true);
  });
});
