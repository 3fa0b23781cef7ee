import type { Server } from 'node:http';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, BrowserContext, Page, Route } from 'playwright-core';
import type { Task, TaskEvent } from '@agentic-task-service/client';
import type { PageWatch } from '../support/browser';
import { buildConsole, launchChromium, signIn, watchPage } from '../support/browser';
import type { Harness } from '../support/service-harness';
import { startHarness } from '../support/service-harness';

// A tool call's network connections on the task page, in a real browser. First with the task's
// answers (the task, its stream, its files) canned by page.route, which pins the rendering of
// what a real proxy seldom says: hosts and reasons carrying markup (they come from the sandboxed
// command), twenty connections folded. Then a real command through the service's egress proxy
// (SANDBOX_NETWORK=egress; the "internet" a server on 127.0.0.2 that SANDBOX_EGRESS_ALLOW_HOSTS names).

const TASK_ID = 'task_0e9e55c0ffee4d1c8a1e9e55c0ffee4d';
const AT = '2026-11-28T10:00:00.000Z';
const PAYLOAD = `<img src=x onerror="window.__xss='egress'">`;

/** The task's events as its stream carries them: one shell call that made three connections, then a bulk one. */
const EVENTS: TaskEvent[] = [
  { type: 'message', data: { messageId: 'msg_1', text: 'Fetch the package', queued: true } },
  { type: 'status', data: { status: 'running', turn: 1, messageId: 'msg_1' } },
  { type: 'tool_call', data: { callId: 'call_1', toolName: 'shell', status: 'approved', args: { command: 'pip download requests' } } },
  { type: 'tool_started', data: { callId: 'call_1', toolName: 'shell' } },
  {
    type: 'egress',
    data: { callId: 'call_1', host: 'pypi.org', port: 443, allowed: true, bytesOut: 12_345, bytesIn: 1_234_567, durationMs: 340 },
  },
  {
    type: 'egress',
    data: {
      callId: 'call_1',
      host: 'evil.example',
      port: 443,
      allowed: false,
      reason: "refused: not in the task's network.allow",
      bytesOut: 0,
      bytesIn: 0,
      durationMs: 1,
    },
  },
  {
    type: 'egress',
    data: {
      callId: 'call_1',
      host: PAYLOAD,
      port: 0,
      allowed: false,
      reason: `refused: not a host:port ${PAYLOAD}`,
      bytesOut: 0,
      bytesIn: 0,
      durationMs: 0,
    },
  },
  {
    type: 'tool_result',
    data: { callId: 'call_1', toolName: 'shell', status: 'success', output: 'Saved requests.whl', exitCode: 0, durationMs: 900 },
  },
  { type: 'tool_call', data: { callId: 'call_2', toolName: 'shell', status: 'approved', args: { command: 'pip install -r many.txt' } } },
  ...Array.from({ length: 20 }, (_, i): TaskEvent => ({
    type: 'egress',
    data: {
      callId: 'call_2',
      host: `files${i}.pythonhosted.org`,
      port: 443,
      allowed: true,
      bytesOut: 800,
      bytesIn: 52_000,
      durationMs: 30,
    },
  })),
  {
    type: 'tool_result',
    data: { callId: 'call_2', toolName: 'shell', status: 'success', output: 'Installed.', exitCode: 0, durationMs: 2400 },
  },
  { type: 'content', data: { text: 'Fetched.' } },
  { type: 'done', data: { status: 'completed', turn: 1 } },
];

const TASK: Task = {
  id: TASK_ID,
  status: 'completed',
  createdAt: AT,
  updatedAt: AT,
  autoExecute: true,
  showInHistory: true,
  messages: [{ id: 'msg_1', text: 'Fetch the package', createdAt: AT, eventId: 1 }],
  pendingApprovals: [],
  usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, costUsd: 0 },
  maxTokens: null,
  maxCostUsd: null,
  webhookUrl: null,
  network: { allow: ['pypi.org', '*.pythonhosted.org'] },
  envKeys: [],
  files: [],
  secretNames: [],
  notices: [],
  sandbox: 'active',
  turn: 1,
  lastEventId: EVENTS.length,
  forkedFrom: null,
  scheduleId: null,
};

const sse = (events: TaskEvent[]): string =>
  events.map((event, i) => `event: ${event.type}\ndata: ${JSON.stringify(event)}\nid: ${i + 1}\n\n`).join('');

/** Answers the page's requests about TASK_ID as the service would; everything else goes to the service. */
async function cannedTask(route: Route): Promise<void> {
  const path = new URL(route.request().url()).pathname.slice(`/api/v1/tasks/${TASK_ID}`.length);
  const json = (body: unknown) => route.fulfill({ status: 200, contentType: 'application/json', body: JSON.stringify(body) });
  if (path === '') return json({ success: true, data: TASK });
  if (path === '/artifacts') return json({ files: [] });
  if (path === '/stream') return route.fulfill({ status: 200, contentType: 'text/event-stream', body: sse(EVENTS) });
  return route.fulfill({
    status: 404,
    contentType: 'application/json',
    body: '{"success":false,"error":{"code":"NOT_FOUND","message":"no"}}',
  });
}

describe("Web console: a tool call's network connections", () => {
  let h: Harness;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let watch: PageWatch;
  let web: Server;
  let webPort: number;
  jest.setTimeout(90_000);

  beforeAll(async () => {
    buildConsole();
    web = createServer((_req, res) => res.end('PLAIN-HTTP-BODY\n'));
    webPort = await new Promise<number>((resolve) => web.listen(0, '127.0.0.2', () => resolve((web.address() as AddressInfo).port)));
    h = await startHarness({ SANDBOX_NETWORK: 'egress', SANDBOX_EGRESS_ALLOW_HOSTS: `127.0.0.2:${webPort}`, SANDBOX_TIMEOUT_MS: '30000' });
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await h?.close();
    web?.close();
  });
  beforeEach(async () => {
    context = await browser.newContext({ viewport: { width: 1100, height: 900 } });
    context.setDefaultTimeout(15_000);
    page = await context.newPage();
    watch = await watchPage(context, page);
    await page.route(new RegExp(`/api/v1/tasks/${TASK_ID}(/[a-z]+)?(\\?.*)?$`), cannedTask);
  });
  afterEach(async () => {
    expect(await watch.violations()).toEqual([]);
    expect(watch.consoleErrors).toEqual([]);
    await context.close();
  });

  const card = (nth: number) => page.getByRole('article', { name: 'Tool call shell', exact: true }).nth(nth);

  it("lists each connection under its call: bytes and time, or the refusal's reason, marked; hostile text stays text", async () => {
    await signIn(page, h.url);
    await page.goto(`${h.url}/console#/tasks/${TASK_ID}`);
    await page.getByText('Fetched.').waitFor();

    const first = card(0).getByRole('list', { name: 'Network connections of shell' });
    expect(await card(0).locator('details.egress summary').textContent()).toBe('Network: 3 connections, 2 refused');
    expect(await first.getByRole('listitem').allTextContents()).toEqual([
      '↗ pypi.org:443 — 12.3 kB out / 1.2 MB in, 340 ms',
      "↗ evil.example:443 — refused: not in the task's network.allow",
      `↗ ${PAYLOAD}:0 — refused: not a host:port ${PAYLOAD}`,
    ]);
    expect(await first.locator('li.egress-refused').count()).toBe(2);
    expect(await first.locator('li.egress-allowed').count()).toBe(1);
    // The connections sit between the call's arguments and its result, as they happened.
    const order = await card(0).evaluate((article) => [...article.children].map((child) => child.className || child.tagName));
    expect(order.indexOf('egress')).toBeGreaterThan(order.indexOf('args'));
    expect(order.indexOf('egress')).toBeLessThan(order.indexOf('result'));

    // Twenty connections start folded, as long output does.
    const many = card(1).locator('details.egress');
    expect(await many.locator('summary').textContent()).toBe('Network: 20 connections');
    expect(await many.getAttribute('open')).toBeNull();
    await many.locator('summary').click();
    expect(await many.getByRole('listitem').count()).toBe(20);

    // The task's allow-list, as it was given.
    expect(await page.getByLabel('Network allow-list').textContent()).toBe('pypi.org, *.pythonhosted.org');
    expect(await page.locator('main img').count()).toBe(0);
    expect(await watch.xssFlag()).toBeUndefined();
  });

  it("shows a real command's connections through the egress proxy: the allowed one with its bytes, the other refused by the task's allow-list", async () => {
    h.model.script(
      {
        toolCalls: [
          {
            name: 'shell',
            arguments: { command: `curl -sS http://127.0.0.2:${webPort}/; curl -sS -o /dev/null -w '%{http_code}' http://example.com/` },
          },
        ],
      },
      { text: 'Fetched for real.' },
    );
    const { id } = await h.client().tasks.create({ message: 'Fetch through the proxy', network: { allow: [`127.0.0.2:${webPort}`] } });
    await signIn(page, h.url);
    await page.goto(`${h.url}/console#/tasks/${id}`);
    await page.getByText('Fetched for real.').waitFor();

    expect(await card(0).locator('pre.output').textContent()).toBe('PLAIN-HTTP-BODY\n403');
    expect(await card(0).locator('details.egress summary').textContent()).toBe('Network: 2 connections, 1 refused');
    const [through, refused] = await card(0)
      .getByRole('list', { name: 'Network connections of shell' })
      .getByRole('listitem')
      .allTextContents();
    expect(through).toMatch(new RegExp(`^↗ 127\\.0\\.0\\.2:${webPort} — \\d+ B out / \\d+ B in, \\d+ ms$`));
    expect(refused).toBe("↗ example.com:80 — refused: not in the task's network.allow");
    expect(await page.getByLabel('Network allow-list').textContent()).toBe(`127.0.0.2:${webPort}`);
  });
});
