import type { ServerResponse } from 'node:http';
import { deflateRawSync, deflateSync, gzipSync } from 'node:zlib';
import type { ToolResult } from '../tool-spec';
import type { LocalHttpServer } from './testing/local-http-server';
import { startLocalHttpServer } from './testing/local-http-server';
import { webFetchConfigFromEnv } from './web-fetch.config';
import { createWebFetchTool } from './web-fetch.tool';

const ARTICLE = `<!doctype html><html><head><title>Release notes</title><script>window.leak = "script-secret"</script>
<style>.x { color: red }</style></head><body><nav><a href="/">Home</a></nav><main><article>
<h2>What changed</h2><p>The importer now reads <a href="/docs/import?v=2">version two files</a> and keeps their order.</p>
<h3>Upgrading</h3><p>Run the migration once; it is safe to run twice.</p><script>console.log("inline-secret")</script>
</article></main></body></html>`;

const servers: LocalHttpServer[] = [];
async function serve(handler: Parameters<typeof startLocalHttpServer>[0]): Promise<LocalHttpServer> {
  const server = await startLocalHttpServer(handler);
  servers.push(server);
  return server;
}
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

function fetchWith(env: Record<string, string>, url: string, signal?: AbortSignal): Promise<ToolResult> {
  return createWebFetchTool(webFetchConfigFromEnv(env)).execute({ url }, { workspaceRoot: '/nonexistent', signal });
}
const allow = (...servers: LocalHttpServer[]) => ({ WEB_FETCH_ALLOW_HOSTS: servers.map((s) => `127.0.0.1:${s.port}`).join(',') });
const html = (body: string) => (_req: unknown, res: ServerResponse) =>
  res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' }).end(body);
const redirect = (status: number, location: string) => (res: ServerResponse) => res.writeHead(status, { Location: location }).end();

describe('web_fetch against local servers', () => {
  it('fetches an allow-listed loopback page and returns its main content as markdown', async () => {
    const site = await serve(html(ARTICLE));
    const result = await fetchWith(allow(site), `${site.origin}/notes`);
    expect(result.status).toBe('success');
    expect(result.output).toMatch(
      new RegExp(`^URL: ${site.origin}/notes\nStatus: 200 OK\nContent-Type: text/html; charset=utf-8\nTitle: Release notes\n\n`),
    );
    expect(result.output).toContain('## What changed');
    expect(result.output).toContain('### Upgrading');
    expect(result.output).toContain(`[version two files](${site.origin}/docs/import?v=2)`);
    expect(result.output).not.toMatch(/script-secret|inline-secret|color: red/);
    expect(site.requests[0].headers).toMatchObject({
      'user-agent': 'agentic-task-service web_fetch',
      accept: 'text/html, text/plain, application/json, */*;q=0.5',
    });
  });

  it('refuses a loopback address that is not allow-listed, without connecting', async () => {
    const site = await serve(html(ARTICLE));
    const other = await serve(html('other'));
    const result = await fetchWith(allow(other), `${site.origin}/`);
    expect(result).toEqual({ status: 'error', output: expect.stringMatching(/^refused: 127\.0\.0\.1 is a loopback address; /) });
    expect(site.requests).toHaveLength(0);
  });

  it('refuses a redirect from an allow-listed server to a loopback port that is not', async () => {
    const target = await serve(html('internal admin page'));
    const site = await serve((_req, res) => redirect(302, `${target.origin}/admin`)(res));
    const result = await fetchWith(allow(site), `${site.origin}/start`);
    expect(result.status).toBe('error');
    expect(result.output).toBe(
      `${site.origin}/start redirected to ${target.origin}/admin, which failed: refused: 127.0.0.1 is a loopback address; ` +
        'only public addresses are reached (hosts in WEB_FETCH_ALLOW_HOSTS excepted)',
    );
    expect(target.requests).toHaveLength(0);
  });

  it('refuses a redirect to the cloud metadata address', async () => {
    const site = await serve((_req, res) => redirect(301, 'http://169.254.169.254/latest/meta-data/')(res));
    const result = await fetchWith(allow(site), `${site.origin}/`);
    expect(result).toEqual({ status: 'error', output: expect.stringContaining('refused: 169.254.169.254 is the cloud metadata address') });
  });

  it('follows a redirect chain within the allow-list, relative and absolute, to the final page', async () => {
    const end = await serve(html('<html><head><title>Arrived</title></head><body><p>final page</p></body></html>'));
    const start = await serve((req, res) => (req.url === '/a' ? redirect(302, '/b?x=1')(res) : redirect(308, `${end.origin}/c`)(res)));
    const result = await fetchWith(allow(start, end), `${start.origin}/a`);
    expect(result.status).toBe('success');
    expect(result.output).toMatch(new RegExp(`^URL: ${end.origin}/c\n`));
    expect(result.output).toContain('final page');
    expect(start.requests.map((r) => r.url)).toEqual(['/a', '/b?x=1']);
  });

  it('stops after WEB_FETCH_MAX_REDIRECTS redirects', async () => {
    const loop = await serve((req, res) => redirect(302, `/hop${Number(req.url?.slice(4) || 0) + 1}`)(res));
    const result = await fetchWith({ ...allow(loop), WEB_FETCH_MAX_REDIRECTS: '2' }, `${loop.origin}/hop0`);
    expect(result).toEqual({
      status: 'error',
      output: `too many redirects: ${loop.origin}/hop0 still redirected after 2 (the WEB_FETCH_MAX_REDIRECTS limit), last to /hop3`,
    });
    expect(loop.requests).toHaveLength(3);
  });

  it('reads no more than WEB_FETCH_MAX_BYTES and closes the connection on the rest', async () => {
    const total = 64 * 1024 * 1024;
    let written = 0;
    let finished = false;
    let onClosed!: () => void;
    const closed = new Promise<void>((resolve) => (onClosed = resolve));
    const bigServer = await serve((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/plain' });
      res.on('close', onClosed);
      res.on('finish', () => (finished = true));
      const chunk = Buffer.alloc(64 * 1024, 'a');
      // Writes only as fast as the client reads, so `written` shows how much it asked for.
      const pump = () => {
        while (written < total && !res.destroyed) {
          written += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', pump);
        }
        if (written >= total) res.end();
      };
      pump();
    });
    const result = await fetchWith({ ...allow(bigServer), WEB_FETCH_MAX_BYTES: '100000' }, `${bigServer.origin}/big.txt`);
    expect(result.status).toBe('success');
    expect(result.output).toBe(
      `URL: ${bigServer.origin}/big.txt\nStatus: 200 OK\nContent-Type: text/plain\n\n${'a'.repeat(100_000)}\n\n[truncated: the page is larger than 100000 bytes]`,
    );
    await closed;
    expect(finished).toBe(false);
    expect(written).toBeLessThan(total);
  });

  it('decodes a gzip body', async () => {
    const site = await serve((_req, res) =>
      res.writeHead(200, { 'Content-Type': 'text/plain', 'Content-Encoding': 'gzip' }).end(gzipSync('hello from gzip')),
    );
    const result = await fetchWith(allow(site), `${site.origin}/`);
    expect(result).toEqual({ status: 'success', output: expect.stringMatching(/\n\nhello from gzip$/) });
  });

  it('decodes deflate bodies, zlib-wrapped as the standard says or raw as some servers send them', async () => {
    for (const [kind, body] of [
      ['wrapped', deflateSync('hello from zlib deflate')],
      ['raw', deflateRawSync('hello from raw deflate')],
    ] as const) {
      const site = await serve((_req, res) => {
        res.writeHead(200, { 'Content-Type': 'text/plain', 'Content-Encoding': 'deflate' });
        res.write(body.subarray(0, 1)); // the header split across chunks
        setTimeout(() => res.end(body.subarray(1)), 20);
      });
      const result = await fetchWith(allow(site), `${site.origin}/`);
      expect({ kind, result }).toEqual({
        kind,
        result: { status: 'success', output: expect.stringMatching(/\n\nhello from (zlib|raw) deflate$/) },
      });
    }
  });

  it('applies the byte limit to a raw deflate bomb too', async () => {
    const bomb = deflateRawSync(Buffer.alloc(32 * 1024 * 1024, 'y'));
    const site = await serve((_req, res) => res.writeHead(200, { 'Content-Type': 'text/plain', 'Content-Encoding': 'deflate' }).end(bomb));
    const result = await fetchWith({ ...allow(site), WEB_FETCH_MAX_BYTES: '4000' }, `${site.origin}/`);
    expect(result.output).toMatch(new RegExp(`\n\ny{4000}\n\n\\[truncated: the page is larger than 4000 bytes\\]$`));
  });

  it('applies the byte limit to decompressed bytes, so a gzip bomb stays small', async () => {
    const bomb = gzipSync(Buffer.alloc(32 * 1024 * 1024, 'z')); // 32 MiB inflated, about 32 KiB on the wire
    const site = await serve((_req, res) => res.writeHead(200, { 'Content-Type': 'text/plain', 'Content-Encoding': 'gzip' }).end(bomb));
    const result = await fetchWith({ ...allow(site), WEB_FETCH_MAX_BYTES: '5000' }, `${site.origin}/`);
    expect(result.output).toMatch(new RegExp(`\n\nz{5000}\n\n\\[truncated: the page is larger than 5000 bytes\\]$`));
  });

  it('gives up after WEB_FETCH_TIMEOUT_MS when the server never answers', async () => {
    const silent = await serve(() => undefined);
    const started = Date.now();
    const result = await fetchWith({ ...allow(silent), WEB_FETCH_TIMEOUT_MS: '300' }, `${silent.origin}/`);
    expect(result).toEqual({ status: 'error', output: 'timed out after 300 ms (the WEB_FETCH_TIMEOUT_MS limit)' });
    expect(Date.now() - started).toBeLessThan(3000);
  });

  it('refuses a host name that resolves to loopback unless that name and port are allow-listed', async () => {
    const site = await serve(html('<p>served on localhost</p>'));
    const url = `http://localhost:${site.port}/`;
    const refused = await fetchWith(allow(site), url);
    expect(refused).toEqual({ status: 'error', output: expect.stringMatching(/^refused: localhost is not a public address; /) });
    expect(refused.output).not.toMatch(/127\.0\.0\.1|::1|loopback/); // what an internal name resolves to stays internal
    expect(site.requests).toHaveLength(0);
    const allowed = await fetchWith({ WEB_FETCH_ALLOW_HOSTS: `localhost:${site.port}` }, url);
    expect(allowed).toEqual({ status: 'success', output: expect.stringContaining('served on localhost') });
  });

  it('refuses a content type that is not text from its header, without waiting for the body', async () => {
    // The body never comes: reading it would end in the timeout instead of the refusal.
    const site = await serve((_req, res) => res.writeHead(200, { 'Content-Type': 'image/png' }).flushHeaders());
    const result = await fetchWith({ ...allow(site), WEB_FETCH_TIMEOUT_MS: '5000' }, `${site.origin}/logo.png`);
    expect(result).toEqual({
      status: 'error',
      output: `${site.origin}/logo.png is image/png, not text; web_fetch only reads text (HTML, plain text, markdown, JSON, XML)`,
    });
  });

  it('refuses a body sent without a content type that turns out to be binary', async () => {
    const site = await serve((_req, res) => res.end(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1])));
    const result = await fetchWith(allow(site), `${site.origin}/blob`);
    expect(result).toEqual({
      status: 'error',
      output: `${site.origin}/blob is binary data, not text; web_fetch only reads text (HTML, plain text, markdown, JSON, XML)`,
    });
  });

  it('answers a non-2xx status with an error result that still shows the page', async () => {
    const site = await serve((_req, res) => res.writeHead(404, { 'Content-Type': 'text/plain' }).end(`No such page. ${'x'.repeat(5000)}`));
    const result = await fetchWith(allow(site), `${site.origin}/missing`);
    expect(result.status).toBe('error');
    expect(result.output).toMatch(
      new RegExp(
        `^URL: ${site.origin}/missing\nStatus: 404 Not Found\nContent-Type: text/plain\n\nNo such page\\. x+\n\n\\[cut: the text is 5014 characters, showing the first 2000\\]$`,
      ),
    );
  });

  it('stops as soon as the call is cancelled', async () => {
    const controller = new AbortController();
    const site = await serve(() => controller.abort());
    const started = Date.now();
    const result = await fetchWith({ ...allow(site), WEB_FETCH_TIMEOUT_MS: '10000' }, `${site.origin}/`, controller.signal);
    expect(result).toEqual({ status: 'error', output: 'cancelled before it finished' });
    expect(Date.now() - started).toBeLessThan(2000);
    expect(site.requests).toHaveLength(1);
  });
});
