import { BraveProvider } from './brave/brave.provider';
import { SearxngProvider } from './searxng/searxng.provider';
import { TavilyProvider } from './tavily/tavily.provider';
import { describeSearchProviderContract } from './testing/search-provider.contract';
import { startSearchEngineServer } from './testing/search-engine-servers';

// Each adapter against a real HTTP server speaking its provider's documented format.
describeSearchProviderContract('searxng', (server, { timeoutMs }) => new SearxngProvider(server.endpoint, timeoutMs));
describeSearchProviderContract('brave', (server, { timeoutMs, apiKey }) => new BraveProvider(server.endpoint, apiKey!, timeoutMs), {
  variable: 'BRAVE_API_KEY',
});
describeSearchProviderContract('tavily', (server, { timeoutMs, apiKey }) => new TavilyProvider(server.endpoint, apiKey!, timeoutMs), {
  variable: 'TAVILY_API_KEY',
});

describe('what each adapter sends', () => {
  it('SearXNG: GET <root>/search with q and format=json, under a root with a path too', async () => {
    const server = await startSearchEngineServer('searxng', []);
    try {
      await new SearxngProvider(server.endpoint, 5000).search('a b', { maxResults: 5 });
      expect(server.received[0]).toMatchObject({ method: 'GET', path: '/search' });
      expect(Object.fromEntries(server.received[0].query)).toEqual({ q: 'a b', format: 'json' });
      // An instance under a path prefix (https://host/searx) keeps the prefix.
      const prefixed = new SearxngProvider(new URL(`${server.endpoint.origin}/searx`), 5000);
      await expect(prefixed.search('a', { maxResults: 5 })).rejects.toThrow(
        'searxng refused the request (HTTP 403); the instance must list json under search.formats in its settings.yml',
      );
      expect(server.received[1].path).toBe('/searx/search');
    } finally {
      await server.close();
    }
  });

  it('Brave: the token header and a count of at most 20', async () => {
    const server = await startSearchEngineServer('brave', [], 'k1');
    try {
      await new BraveProvider(server.endpoint, 'k1', 5000).search('a', { maxResults: 20 });
      expect(server.received[0].headers['x-subscription-token']).toBe('k1');
      expect(server.received[0].query.get('count')).toBe('20');
    } finally {
      await server.close();
    }
  });

  it('Tavily: a JSON body with the query and max_results, and a bearer token', async () => {
    const server = await startSearchEngineServer('tavily', [], 'k2');
    try {
      await new TavilyProvider(server.endpoint, 'k2', 5000).search('a', { maxResults: 7 });
      expect(server.received[0]).toMatchObject({ method: 'POST', path: '/search' });
      expect(server.received[0].headers.authorization).toBe('Bearer k2');
      expect(JSON.parse(server.received[0].body)).toEqual({ query: 'a', max_results: 7, search_depth: 'basic' });
    } finally {
      await server.close();
    }
  });

  it('Brave and Tavily never follow a redirect, which would carry their key elsewhere', async () => {
    for (const [kind, create] of [
      ['brave', (url: URL) => new BraveProvider(url, 'k3', 5000)],
      ['tavily', (url: URL) => new TavilyProvider(url, 'k3', 5000)],
    ] as const) {
      const elsewhere = await startSearchEngineServer(kind, [], 'k3');
      const server = await startSearchEngineServer(kind, [], 'k3');
      try {
        server.behave({ kind: 'redirect', location: elsewhere.endpoint.origin });
        await expect(create(server.endpoint).search('a', { maxResults: 5 })).rejects.toThrow(
          `${kind} redirected the request (HTTP 307) to ${elsewhere.endpoint.origin}; it is not followed, since the request carries the API key: configure the final address as the endpoint`,
        );
        expect(server.received).toHaveLength(1);
        expect(elsewhere.received).toHaveLength(0);
      } finally {
        await server.close();
        await elsewhere.close();
      }
    }
  });

  it('SearXNG (no key) follows a redirect, e.g. to the instance’s new address', async () => {
    const moved = await startSearchEngineServer('searxng', [{ title: 'Moved page', url: 'https://example.org/moved', text: 'moved' }]);
    const server = await startSearchEngineServer('searxng', []);
    try {
      server.behave({ kind: 'redirect', location: moved.endpoint.origin });
      const hits = await new SearxngProvider(server.endpoint, 5000).search('moved', { maxResults: 5 });
      expect(hits.map((h) => h.url)).toEqual(['https://example.org/moved']);
      expect(moved.received).toHaveLength(1);
    } finally {
      await server.close();
      await moved.close();
    }
  });
});
