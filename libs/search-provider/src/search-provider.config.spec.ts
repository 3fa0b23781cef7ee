import { BraveProvider } from './brave/brave.provider';
import { createSearchProvider, describeSearchConfig, searchConfigFromEnv } from './search-provider.config';
import { SearxngProvider } from './searxng/searxng.provider';
import { TavilyProvider } from './tavily/tavily.provider';

describe('searchConfigFromEnv', () => {
  it('offers no search when SEARCH_PROVIDER is unset or blank', () => {
    expect(searchConfigFromEnv({})).toBeUndefined();
    expect(searchConfigFromEnv({ SEARCH_PROVIDER: '  ', BRAVE_API_KEY: 'k' })).toBeUndefined();
  });

  it('reads SearXNG with defaults for the bounds', () => {
    const config = searchConfigFromEnv({ SEARCH_PROVIDER: 'SearXNG', SEARXNG_URL: 'http://127.0.0.1:8888' })!;
    expect(config).toMatchObject({ provider: 'searxng', maxResults: 10, timeoutMs: 10_000 });
    expect(config.endpoint.href).toBe('http://127.0.0.1:8888/');
    expect(createSearchProvider(config)).toBeInstanceOf(SearxngProvider);
  });

  it('reads Brave and Tavily with their public endpoints unless overridden', () => {
    const brave = searchConfigFromEnv({
      SEARCH_PROVIDER: 'brave',
      BRAVE_API_KEY: 'bk',
      WEB_SEARCH_MAX_RESULTS: '20',
      WEB_SEARCH_TIMEOUT_MS: '5000',
    })!;
    expect(brave).toMatchObject({ provider: 'brave', apiKey: 'bk', maxResults: 20, timeoutMs: 5000 });
    expect(brave.endpoint.href).toBe('https://api.search.brave.com/res/v1/web/search');
    expect(createSearchProvider(brave)).toBeInstanceOf(BraveProvider);
    const tavily = searchConfigFromEnv({ SEARCH_PROVIDER: 'tavily', TAVILY_API_KEY: 'tk', TAVILY_API_URL: 'http://127.0.0.1:9/search' })!;
    expect(tavily.endpoint.href).toBe('http://127.0.0.1:9/search');
    expect(createSearchProvider(tavily)).toBeInstanceOf(TavilyProvider);
  });

  it.each([
    [{ SEARCH_PROVIDER: 'google' }, /SEARCH_PROVIDER is "google"; set it to one of searxng, brave, tavily/],
    [{ SEARCH_PROVIDER: 'searxng' }, /SEARXNG_URL is unset/],
    [{ SEARCH_PROVIDER: 'searxng', SEARXNG_URL: 'not a url' }, /SEARXNG_URL is not a valid URL/],
    [{ SEARCH_PROVIDER: 'searxng', SEARXNG_URL: 'ftp://h/' }, /SEARXNG_URL must be an http/],
    [{ SEARCH_PROVIDER: 'searxng', SEARXNG_URL: 'http://u:p@h/' }, /must not carry credentials/],
    [{ SEARCH_PROVIDER: 'brave' }, /BRAVE_API_KEY is unset/],
    [{ SEARCH_PROVIDER: 'tavily' }, /TAVILY_API_KEY is unset/],
    [{ SEARCH_PROVIDER: 'brave', BRAVE_API_KEY: 'k', WEB_SEARCH_MAX_RESULTS: '21' }, /WEB_SEARCH_MAX_RESULTS must be at most 20/],
    [{ SEARCH_PROVIDER: 'brave', BRAVE_API_KEY: 'k', WEB_SEARCH_MAX_RESULTS: '0' }, /WEB_SEARCH_MAX_RESULTS must be an integer >= 1/],
    [{ SEARCH_PROVIDER: 'brave', BRAVE_API_KEY: 'k', WEB_SEARCH_TIMEOUT_MS: 'soon' }, /WEB_SEARCH_TIMEOUT_MS must be an integer/],
  ])('refuses %j with a message naming the variable', (env, message) => {
    expect(() => searchConfigFromEnv(env)).toThrow(message);
  });

  it('describes the configuration without the API key', () => {
    const line = describeSearchConfig(searchConfigFromEnv({ SEARCH_PROVIDER: 'brave', BRAVE_API_KEY: 'super-secret-key' }));
    expect(line).toBe(
      'web_search: brave at https://api.search.brave.com/res/v1/web/search, up to 10 results, 10000 ms per search, API key set',
    );
    expect(line).not.toContain('super-secret-key');
    expect(describeSearchConfig(undefined)).toContain('off');
  });
});
