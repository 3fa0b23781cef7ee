import type { SearchEngineServer } from '@app/search-provider/testing/search-engine-servers';
import { startSearchEngineServer } from '@app/search-provider/testing/search-engine-servers';
import type { Harness } from '../../../test/support/service-harness';
import { startHarness, waitFor } from '../../../test/support/service-harness';
import { followStream } from '../../../test/support/sse-client';
import type { LocalHttpServer } from '../src/tools/web-fetch/testing/local-http-server';
import { startLocalHttpServer } from '../src/tools/web-fetch/testing/local-http-server';

// web_fetch through the whole service: a real local page on a port WEB_FETCH_ALLOW_HOSTS allows,
// and a loopback port it does not.

const PAGE = `<!doctype html><html><head><title>Changelog</title></head><body>
<nav>menu</nav><article><h1>Version 2</h1><p>The <a href="/docs">new docs</a> explain the release in detail for every reader.</p>
<p>Paragraphs give Readability enough text to pick this article as the page's main content.</p></article></body></html>`;

describe('web tools', () => {
  let h: Harness;
  let site: LocalHttpServer;
  let closed: LocalHttpServer;
  beforeAll(async () => {
    site = await startLocalHttpServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(PAGE));
    closed = await startLocalHttpServer((_req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('internal secret page'));
    h = await startHarness({ WEB_FETCH_ALLOW_HOSTS: `127.0.0.1:${site.port}` });
  });
  afterAll(async () => {
    await h?.close();
    await site?.close();
    await closed?.close();
  });

  it('fetches an allowed page as markdown and refuses a private address that is not allowed', async () => {
    h.model.script(
      {
        toolCalls: [
          { name: 'web_fetch', arguments: { url: `${site.origin}/changelog` } },
          { name: 'web_fetch', arguments: { url: `${closed.origin}/` } },
        ],
      },
      { text: 'Read it.' },
    );
    const id = (await h.api('/api/v1/tasks', { method: 'POST', json: { message: 'read the changelog' } })).body.data.id;
    const events = await followStream(`${h.url}/api/v1/tasks/${id}/stream`, 'test-key-tenant-a', { timeoutMs: 30_000 });
    const [page, refused] = events.filter((e) => e.kind === 'tool_result').map((e) => e.payload.data);
    expect(page).toMatchObject({ toolName: 'web_fetch', status: 'success' });
    expect(page.output).toContain('# Version 2');
    expect(page.output).toContain(`[new docs](${site.origin}/docs)`);
    expect(refused).toMatchObject({ toolName: 'web_fetch', status: 'error' });
    expect(refused.output).toContain('refused: 127.0.0.1 is a loopback address');
    expect(closed.requests).toHaveLength(0);
    const offered = (h.model.requests[0].tools ?? []).map((t) => t.function?.name);
    expect(offered).toContain('web_fetch');
    expect(offered).not.toContain('web_search'); // no SEARCH_PROVIDER here
  });
});

// web_search through the whole service against a local server speaking SearXNG's JSON format:
// offered when configured, held for approval like any tool, secrets in results redacted.
describe('web_search with SEARCH_PROVIDER=searxng', () => {
  const CANARY = 'sk-search-canary-5fd1c0';
  let h: Harness;
  let engine: SearchEngineServer;
  beforeAll(async () => {
    engine = await startSearchEngineServer('searxng', [
      { title: 'Release notes 2.0', url: 'https://example.org/releases/2.0', text: 'Version 2.0 ships streaming uploads.' },
      { title: 'Leaked key page', url: 'https://paste.example/leak', text: `someone pasted ${CANARY} in release notes` },
    ]);
    h = await startHarness({ SEARCH_PROVIDER: 'searxng', SEARXNG_URL: engine.endpoint.origin, WEB_SEARCH_MAX_RESULTS: '5' });
  });
  afterAll(async () => {
    await h?.close();
    await engine?.close();
  });

  it('offers web_search, waits for approval, and returns the results with secrets redacted', async () => {
    h.model.script({ toolCalls: [{ name: 'web_search', arguments: { query: 'release notes', maxResults: 3 } }] }, { text: 'Found them.' });
    const created = await h.api('/api/v1/tasks', {
      method: 'POST',
      json: { message: 'find the release notes', autoExecute: false, secrets: { PASTE_KEY: CANARY } },
    });
    const id = created.body.data.id;
    const pending = await waitFor(async () => (await h.api(`/api/v1/tasks/${id}`)).body.data.pendingApprovals[0]);
    expect(pending).toMatchObject({ toolName: 'web_search', args: { query: 'release notes', maxResults: 3 } });
    expect(engine.received).toHaveLength(0); // nothing searched before the decision
    expect(
      (await h.api(`/api/v1/tasks/${id}/tools/${pending.callId}/approve`, { method: 'POST', json: { outcome: 'proceed_once' } })).status,
    ).toBe(200);

    const events = await followStream(`${h.url}/api/v1/tasks/${id}/stream?after=0`, 'test-key-tenant-a', { timeoutMs: 30_000 });
    const result = events.find((e) => e.kind === 'tool_result')!.payload.data;
    expect(result).toMatchObject({ toolName: 'web_search', status: 'success' });
    expect(result.output).toBe(
      '2 results for "release notes":\n\n' +
        '1. Release notes 2.0\n   https://example.org/releases/2.0\n   Version 2.0 ships streaming uploads.\n\n' +
        '2. Leaked key page\n   https://paste.example/leak\n   someone pasted [REDACTED:PASTE_KEY] in release notes',
    );
    expect(JSON.stringify(events)).not.toContain(CANARY);
    expect(engine.received.map((r) => r.query.get('q'))).toEqual(['release notes']);
    const offered = h.model.requests[0].tools!.find((t) => t.function?.name === 'web_search')!.function!;
    expect(offered.parameters).toMatchObject({ required: ['query'], properties: { maxResults: { maximum: 5 } } });
  });
});
