import { SearxngProvider } from '@app/search-provider/searxng/searxng.provider';
import { CORPUS } from '@app/search-provider/testing/search-provider.contract';
import type { SearchEngineServer } from '@app/search-provider/testing/search-engine-servers';
import { startSearchEngineServer } from '@app/search-provider/testing/search-engine-servers';
import { createWebSearchTool, formatHits } from './web-search.tool';

// The tool over a real SearXNG-format server: argument checks, output shape, failures as results.
describe('web_search tool', () => {
  let engine: SearchEngineServer;
  beforeAll(async () => (engine = await startSearchEngineServer('searxng', CORPUS)));
  afterAll(() => engine.close());
  const tool = () => createWebSearchTool(new SearxngProvider(engine.endpoint, 2000), 5);
  const ctx = { workspaceRoot: '/nonexistent' };

  it('returns a numbered list of title, URL and snippet', async () => {
    const result = await tool().execute({ query: 'backpressure' }, ctx);
    expect(result).toEqual({
      status: 'success',
      output:
        '1 result for "backpressure":\n\n1. Backpressure in streams\n   https://example.org/backpressure?x=1&y=2\n   When a writable stream cannot keep up, streams apply backpressure.',
    });
  });

  it('returns the configured most by default, fewer when asked, never more', async () => {
    const count = async (args: Record<string, unknown>) =>
      (await tool().execute({ query: 'plentiful', ...args }, ctx)).output.match(/^\d+\. /gm)!.length;
    expect(await count({})).toBe(5);
    expect(await count({ maxResults: 2 })).toBe(2);
    expect(await count({ maxResults: 50 })).toBe(5);
  });

  it('says when nothing was found', async () => {
    await expect(tool().execute({ query: 'zzzqqq' }, ctx)).resolves.toEqual({ status: 'success', output: 'No results for "zzzqqq".' });
  });

  it.each([
    ['no query', {}, 'invalid arguments: missing required argument "query" (string)'],
    ['a blank query', { query: '   ' }, 'invalid arguments: "query" is empty; say what to search for'],
    ['a query over 400 characters', { query: 'x'.repeat(401) }, 'invalid arguments: "query" has 401 characters; at most 400 are allowed'],
    ['maxResults 0', { query: 'a', maxResults: 0 }, 'invalid arguments: "maxResults" must be a whole number from 1 to 5, got 0'],
    [
      'maxResults as a string',
      { query: 'a', maxResults: '3' },
      'invalid arguments: "maxResults" must be a whole number from 1 to 5, got "3"',
    ],
    ['an unknown argument', { query: 'a', limit: 3 }, 'invalid arguments: unknown argument "limit"; expected query, maxResults'],
  ])('refuses %s without searching', async (_label, args, output) => {
    const before = engine.received.length;
    await expect(tool().execute(args, ctx)).resolves.toEqual({ status: 'error', output });
    expect(engine.received).toHaveLength(before);
  });

  it('turns a provider failure into an error result the model can read', async () => {
    engine.behave({ kind: 'status', status: 503, contentType: 'text/plain', body: 'maintenance' });
    try {
      await expect(tool().execute({ query: 'streams' }, ctx)).resolves.toEqual({
        status: 'error',
        output: 'web search failed: searxng answered HTTP 503: maintenance',
      });
    } finally {
      engine.behave({ kind: 'answer' });
    }
  });

  it('stops when the call is cancelled', async () => {
    engine.behave({ kind: 'hang' });
    try {
      const controller = new AbortController();
      setTimeout(() => controller.abort(), 50);
      await expect(tool().execute({ query: 'streams' }, { ...ctx, signal: controller.signal })).resolves.toEqual({
        status: 'error',
        output: 'cancelled before it finished',
      });
    } finally {
      engine.behave({ kind: 'answer' });
    }
  });

  it('leaves out an empty snippet line', () => {
    expect(formatHits('q', [{ title: 'T', url: 'https://t.example/', snippet: '' }])).toBe(
      '1 result for "q":\n\n1. T\n   https://t.example/',
    );
  });
});
