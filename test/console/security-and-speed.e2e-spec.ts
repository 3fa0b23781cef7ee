import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import type { PageWatch } from '../support/browser';
import { buildConsole, launchChromium, signIn, watchPage } from '../support/browser';
import type { DroppingProxy } from '../support/dropping-proxy';
import { startDroppingProxy } from '../support/dropping-proxy';
import type { Harness } from '../support/service-harness';
import { startHarness } from '../support/service-harness';

// What the console must never do (run an agent's markup as script, load from elsewhere) and how
// fast it must be, checked in a real browser against the real service; and a stream that a proxy
// keeps cutting, which the page must follow without a lost or doubled line.

const ASSETS = join(__dirname, '../../services/api/console/dist/assets');

/** Would run script if rendered as HTML: an inline handler, a script tag, a javascript: link. */
const PAYLOAD = `<img src=x onerror="window.__xss='img'"><script>window.__xss='script'</script><a href="javascript:window.__xss='a'">x</a>`;
// No quote in it: Chromium's multipart encodes a quote in a file name as %22.
const EVIL_NAME = '<img src=x onerror=window.__xss=1>.txt';

describe('Web console: security, speed, a cut stream', () => {
  let h: Harness;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let watch: PageWatch;
  jest.setTimeout(90_000);

  beforeAll(async () => {
    buildConsole();
    h = await startHarness();
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await h?.close();
  });
  beforeEach(async () => {
    context = await browser.newContext({ acceptDownloads: true });
    context.setDefaultTimeout(15_000);
    page = await context.newPage();
    watch = await watchPage(context, page);
  });
  afterEach(async () => {
    expect(watch.consoleErrors).toEqual([]);
    await context.close();
  });

  it('serves the page with a CSP refusing inline script and other origins, no-cache; hashed assets immutable', async () => {
    const index = await fetch(`${h.url}/console`);
    expect(index.status).toBe(200);
    expect(index.headers.get('cache-control')).toBe('no-cache');
    const csp = index.headers.get('content-security-policy')!;
    expect(csp).toContain("default-src 'self'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toMatch(/unsafe-inline|unsafe-eval|https?:|\*/);
    const html = await index.text();
    // No inline script in the page itself: every script has a src under /console/assets/.
    expect(html).not.toMatch(/<script(?![^>]*\ssrc=)[^>]*>/);
    const scripts = [...html.matchAll(/<script[^>]*src="([^"]+)"/g)].map((m) => m[1]);
    expect(scripts.length).toBeGreaterThan(0);
    for (const src of scripts) {
      expect(src).toMatch(/^\/console\/assets\/[\w-]+\.js$/);
      const asset = await fetch(`${h.url}${src}`);
      expect(asset.status).toBe(200);
      expect(asset.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
      expect(asset.headers.get('content-type')).toMatch(/^text\/javascript/);
    }
    // Asset names are a fixed set read at start: a path that is not one of them is a plain 404.
    expect((await fetch(`${h.url}/console/assets/..%2F..%2F..%2F..%2Fpackage.json`)).status).toBe(404);
  });

  it('keeps the JS bundle under 300 KB gzipped and loads in under a second', async () => {
    const scripts = (await readdir(ASSETS)).filter((name) => name.endsWith('.js'));
    const gzipped = (await Promise.all(scripts.map(async (name) => gzipSync(await readFile(join(ASSETS, name))).length))).reduce(
      (a, b) => a + b,
      0,
    );
    expect(gzipped).toBeGreaterThan(1_000);
    expect(gzipped).toBeLessThan(300 * 1024);

    const started = Date.now();
    await page.goto(`${h.url}/console`);
    await page.getByLabel('API key').waitFor();
    const interactiveMs = Date.now() - started;
    const loadMs = await page.evaluate<number>("performance.getEntriesByType('navigation')[0].loadEventEnd");
    expect(loadMs).toBeGreaterThan(0);
    expect(loadMs).toBeLessThan(1_000);
    expect(interactiveMs).toBeLessThan(1_000);
  });

  it('renders markup in a message, a file name, tool output and model text as text: no script runs', async () => {
    h.model.script({ toolCalls: [{ name: 'read_file', arguments: { path: EVIL_NAME } }] }, { text: `Here it is: ${PAYLOAD}` });
    await signIn(page, h.url);
    await page.getByRole('link', { name: 'New task' }).first().click();
    await page.getByLabel('Message').fill(`Read the file ${PAYLOAD}`);
    await page.getByLabel('Files').setInputFiles({ name: EVIL_NAME, mimeType: 'text/plain', buffer: Buffer.from(PAYLOAD) });
    await page.getByRole('button', { name: 'Run', exact: true }).click();
    await page.getByText(`Here it is: ${PAYLOAD}`).waitFor();
    await page.locator('.badge', { hasText: 'completed' }).waitFor();

    expect(await page.getByLabel('User message').textContent()).toBe(`Read the file ${PAYLOAD}`);
    expect(await page.locator('pre.output').textContent()).toBe(PAYLOAD);
    expect(await page.locator('.facts').textContent()).toContain(EVIL_NAME);
    await page.getByRole('link', { name: 'Tasks', exact: true }).click();
    // The list shows the first 120 characters of the message, as text.
    const link = page.getByRole('link', { name: /^Read the file <img src=x onerror=/ });
    await link.waitFor();
    expect(`Read the file ${PAYLOAD}`.startsWith((await link.textContent())!.replace(/…$/, ''))).toBe(true);
    // Nothing the agent wrote became an element, nothing ran, nothing even tried (the CSP would report it).
    expect(await page.locator('main img, main script, main a[href^="javascript:"]').count()).toBe(0);
    expect(await watch.xssFlag()).toBeUndefined();
    expect(await watch.violations()).toEqual([]);
  });

  it('previews an image artifact through a blob: URL the CSP allows', async () => {
    // A 1×1 PNG, uploaded and copied under downloads/ by the shell tool.
    const png = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64');
    h.model.script(
      { toolCalls: [{ name: 'shell', arguments: { command: 'mkdir -p downloads && cp dot.png downloads/dot.png' } }] },
      { text: 'Copied.' },
    );
    await signIn(page, h.url);
    await page.getByRole('link', { name: 'New task' }).first().click();
    await page.getByLabel('Message').fill('Copy the picture');
    await page.getByLabel('Files').setInputFiles({ name: 'dot.png', mimeType: 'image/png', buffer: png });
    await page.getByRole('button', { name: 'Run', exact: true }).click();
    await page.getByRole('link', { name: 'downloads/dot.png', exact: true }).waitFor();
    expect(await page.getByRole('article').locator('summary').textContent()).toContain('exit code 0');
    await page.getByRole('button', { name: 'Preview downloads/dot.png' }).click();
    const image = page.getByRole('img', { name: 'downloads/dot.png' });
    await image.waitFor();
    expect(await image.getAttribute('src')).toMatch(/^blob:/);
    await page.waitForFunction("document.querySelector('img.preview-image')?.naturalWidth === 1");
    expect(await watch.violations()).toEqual([]);
  });

  describe('behind a proxy that cuts every event stream after 3 events', () => {
    let proxy: DroppingProxy;
    beforeAll(async () => {
      proxy = await startDroppingProxy(h.url, 3);
    });
    afterAll(async () => proxy.close());

    it('resumes with Last-Event-ID and shows every event once', async () => {
      h.model.script(
        { text: 'Looking first. ', toolCalls: [{ name: 'list_files', arguments: {} }] },
        { toolCalls: [{ name: 'write_file', arguments: { path: 'downloads/a.json', content: '{"n":1}' } }] },
        { text: 'All done, without a gap.' },
      );
      await signIn(page, proxy.url);
      await page.getByRole('link', { name: 'New task' }).first().click();
      await page.getByLabel('Message').fill('Survive the cuts');
      await page.getByRole('button', { name: 'Run', exact: true }).click();
      // Every stream is cut after 3 events and resumed after a backoff: under a loaded CI machine the
      // page catches up seconds after the task completed (once, 15 s was not enough). What is tested
      // is that nothing is lost or doubled, not how fast.
      await page.locator('.badge', { hasText: 'completed' }).waitFor({ timeout: 30_000 });
      await page.getByText('All done, without a gap.').waitFor({ timeout: 30_000 });
      expect(proxy.drops).toBeGreaterThan(1);
      expect(await page.getByLabel('User message').count()).toBe(1);
      expect(await page.getByRole('article').count()).toBe(2);
      expect(await page.getByLabel('Model text').allTextContents()).toEqual(['Looking first. ', 'All done, without a gap.']);
      await page.getByRole('button', { name: 'Preview downloads/a.json' }).click();
      expect(await page.locator('pre.preview-text').textContent()).toBe('{\n  "n": 1\n}');
    });
  });
});
