import { webFetchConfigFromEnv } from './web-fetch.config';

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
    ['WEB_FETCH_ALLOW_HOSTS', 'localhost'],
  ])('refuses %s=%s naming the variable', (name, value) => {
    expect(() => webFetchConfigFromEnv({ [name]: value })).toThrow(name);
  });
});
