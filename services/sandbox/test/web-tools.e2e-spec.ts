import { Harness, startHarness } from '../../../test/support/service-harness';
import { followStream } from '../../../test/support/sse-client';
import { LocalHttpServer, startLocalHttpServer } from '../src/tools/web-fetch/testing/local-http-server';

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
      { toolCalls: [{ name: 'web_fetch', arguments: { url: `${site.origin}/changelog` } }, { name: 'web_fetch', arguments: { url: `${closed.origin}/` } }] },
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
