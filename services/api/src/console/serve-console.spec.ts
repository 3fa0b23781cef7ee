import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CONSOLE_CSP, serveConsole } from './serve-console';

/** Only what serveConsole uses of the Nest app: its Fastify instance. */
const appOver = (adapter: FastifyAdapter) => ({ getHttpAdapter: () => adapter }) as unknown as NestFastifyApplication;

describe('serveConsole', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'console-build-'));
    await mkdir(join(dir, 'assets'));
    await writeFile(join(dir, 'index.html'), '<!doctype html><script type="module" src="/console/assets/index-abc123.js"></script>');
    await writeFile(join(dir, 'assets', 'index-abc123.js'), 'console.log(1)');
    await writeFile(join(dir, 'assets', 'notes.txt'), 'not a type it serves');
  });
  afterAll(async () => rm(dir, { recursive: true, force: true }));

  it('serves the page revalidated and the hashed assets immutable, each with the CSP', async () => {
    const adapter = new FastifyAdapter();
    await serveConsole(appOver(adapter), dir);
    const fastify = adapter.getInstance();
    for (const url of ['/console', '/console/']) {
      const page = await fastify.inject({ url });
      expect(page.statusCode).toBe(200);
      expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(page.headers['cache-control']).toBe('no-cache');
      expect(page.headers['content-security-policy']).toBe(CONSOLE_CSP);
      expect(page.body).toContain('index-abc123.js');
    }
    const asset = await fastify.inject({ url: '/console/assets/index-abc123.js' });
    expect(asset.statusCode).toBe(200);
    expect(asset.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(asset.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(asset.headers['x-content-type-options']).toBe('nosniff');
    for (const url of ['/console/assets/notes.txt', '/console/assets/..%2Findex.html', '/console/assets/missing.js']) {
      const refused = await fastify.inject({ url });
      expect(refused.statusCode).toBe(404);
      expect(refused.headers['cache-control']).toBe('no-store');
      // The envelope of every other 404, not a bare text.
      expect(refused.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(refused.json()).toEqual({ success: false, error: { code: 'NOT_FOUND', message: 'console asset not found' } });
    }
    await fastify.close();
  });

  it('answers 503 with how to build it when the console was not built', async () => {
    const adapter = new FastifyAdapter();
    await serveConsole(appOver(adapter), join(dir, 'never-built'));
    const page = await adapter.getInstance().inject({ url: '/console' });
    expect(page.statusCode).toBe(503);
    expect(page.body).toContain('npm run build:console');
    expect(page.headers['content-security-policy']).toBe(CONSOLE_CSP);
    await adapter.getInstance().close();
  });
});
