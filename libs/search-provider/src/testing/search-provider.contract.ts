import { createServer } from 'node:net';
import type { SearchProvider } from '../search-provider.port';
import { SearchFailedError } from '../search-provider.port';
import type { IndexedPage, SearchEngineKind, SearchEngineServer } from './search-engine-servers';
import { startSearchEngineServer } from './search-engine-servers';

export const CORPUS: readonly IndexedPage[] = [
  {
    title: 'Node.js streams guide',
    url: 'https://nodejs.org/en/learn/streams',
    text: "Streams let you process data piece by piece; it's the Node way.",
  },
  {
    title: 'Backpressure in streams',
    url: 'https://example.org/backpressure?x=1&y=2',
    text: 'When a writable stream cannot keep up, streams apply backpressure.',
  },
  { title: 'Unsafe link about streams', url: 'javascript:alert(1)', text: 'streams' },
  { title: 'Streams again', url: 'https://nodejs.org/en/learn/streams', text: 'the same page a second time (streams)' },
  ...Array.from({ length: 25 }, (_, i) => ({
    title: `Many result ${i}`,
    url: `https://many.example/${i}`,
    text: `plentiful topic number ${i}`,
  })),
  { title: 'Ünïcode & symbols', url: 'https://example.org/unicode', text: 'grüße aus köln' },
];

export interface ProviderUnderTest {
  /** A provider pointed at `server`, with the key the server accepts unless `apiKey` says otherwise. */
  (server: SearchEngineServer, options: { timeoutMs: number; apiKey?: string }): SearchProvider;
}

/**
 * Every search provider adapter passes this suite, each against a local server speaking its
 * provider's wire format (see search-engine-servers.ts).
 */
export function describeSearchProviderContract(kind: SearchEngineKind, create: ProviderUnderTest, credential?: { variable: string }): void {
  describe(`SearchProvider contract: ${kind}`, () => {
    let server: SearchEngineServer;
    beforeEach(async () => (server = await startSearchEngineServer(kind, CORPUS, 'the-right-key')));
    afterEach(() => server.close());
    const provider = (options: { timeoutMs?: number; apiKey?: string } = {}) =>
      create(server, { timeoutMs: options.timeoutMs ?? 5000, apiKey: options.apiKey ?? 'the-right-key' });

    it('returns title, URL and plain-text snippet of each hit, in the engine order', async () => {
      const hits = await provider().search('backpressure', { maxResults: 10 });
      expect(hits).toEqual([
        {
          title: 'Backpressure in streams',
          url: 'https://example.org/backpressure?x=1&y=2',
          snippet: 'When a writable stream cannot keep up, streams apply backpressure.',
        },
      ]);
    });

    it('keeps only http(s) URLs, each once, and decodes what the engine escaped', async () => {
      const hits = await provider().search('streams', { maxResults: 10 });
      expect(hits.map((h) => h.url)).toEqual(['https://nodejs.org/en/learn/streams', 'https://example.org/backpressure?x=1&y=2']);
      expect(hits[0].snippet).toBe("Streams let you process data piece by piece; it's the Node way.");
    });

    it('sends the query as typed, symbols and non-ASCII included', async () => {
      const hits = await provider().search('grüße & köln?', { maxResults: 10 });
      expect(hits.map((h) => h.title)).toEqual(['Ünïcode & symbols']);
      expect(server.received.at(-1)!.query.get('q') ?? JSON.parse(server.received.at(-1)!.body).query).toBe('grüße & köln?');
    });

    it('returns at most maxResults hits although the engine has more', async () => {
      const hits = await provider().search('plentiful', { maxResults: 3 });
      expect(hits.map((h) => h.title)).toEqual(['Many result 0', 'Many result 1', 'Many result 2']);
    });

    it('returns no hits when nothing matches', async () => {
      await expect(provider().search('zzzqqq', { maxResults: 10 })).resolves.toEqual([]);
    });

    if (credential) {
      it(`says the key was refused, names ${credential.variable}, and never shows the key`, async () => {
        const error = await provider({ apiKey: 'a-wrong-secret-key' })
          .search('streams', { maxResults: 5 })
          .catch((e: unknown) => e);
        expect(error).toBeInstanceOf(SearchFailedError);
        expect((error as Error).message).toMatch(new RegExp(`${kind} refused the request \\(HTTP 401\\).*check ${credential.variable}`));
        expect((error as Error).message).not.toContain('a-wrong-secret-key');
      });
    }

    it('reports an engine error with its status and reason', async () => {
      server.behave({
        kind: 'status',
        status: 502,
        contentType: 'application/json',
        body: JSON.stringify({ message: 'upstream engines failed' }),
      });
      await expect(provider().search('streams', { maxResults: 5 })).rejects.toThrow(
        new SearchFailedError(`${kind} answered HTTP 502: upstream engines failed`),
      );
    });

    it('reports rate limiting as such', async () => {
      server.behave({ kind: 'status', status: 429, contentType: 'text/plain', body: 'slow down' });
      await expect(provider().search('streams', { maxResults: 5 })).rejects.toThrow(
        /rate limiting searches \(HTTP 429\): slow down; try again later/,
      );
    });

    it('reports an answer that is not JSON', async () => {
      server.behave({ kind: 'status', status: 200, contentType: 'text/html', body: '<html>a login page</html>' });
      await expect(provider().search('streams', { maxResults: 5 })).rejects.toThrow(
        `${kind} answered something that is not JSON (content-type text/html)`,
      );
    });

    it('reports JSON without a result list', async () => {
      server.behave({ kind: 'status', status: 200, contentType: 'application/json', body: '[1,2,3]' });
      await expect(provider().search('streams', { maxResults: 5 })).rejects.toThrow(`${kind} answered JSON that is not a search answer`);
    });

    it('gives up on an oversized answer without reading it all', async () => {
      server.behave({ kind: 'oversized', bytes: 8 * 1024 * 1024 });
      await expect(provider().search('streams', { maxResults: 5 })).rejects.toThrow(/answered more than 2097152 bytes/);
    });

    it('gives up when the engine does not answer in time', async () => {
      server.behave({ kind: 'hang' });
      const started = Date.now();
      await expect(provider({ timeoutMs: 300 }).search('streams', { maxResults: 5 })).rejects.toThrow(
        new SearchFailedError(`${kind} did not answer within 300 ms`),
      );
      expect(Date.now() - started).toBeLessThan(3000);
    });

    it('stops at once when the caller aborts', async () => {
      server.behave({ kind: 'hang' });
      const controller = new AbortController();
      setTimeout(() => controller.abort(), 100);
      const error = await provider({ timeoutMs: 10_000 })
        .search('streams', { maxResults: 5, signal: controller.signal })
        .catch((e: unknown) => e);
      expect(controller.signal.aborted).toBe(true);
      expect(error).not.toBeInstanceOf(SearchFailedError);
      expect((error as Error).name).toBe('AbortError');
    });

    it('says so when the engine cannot be reached', async () => {
      const port = await closedPort();
      const unreachable = { ...server, endpoint: new URL(`http://127.0.0.1:${port}${server.endpoint.pathname}`) };
      await expect(create(unreachable, { timeoutMs: 5000, apiKey: 'the-right-key' }).search('streams', { maxResults: 5 })).rejects.toThrow(
        `could not reach ${kind} at http://127.0.0.1:${port}: ECONNREFUSED`,
      );
    });
  });
}

async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as { port: number };
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}
