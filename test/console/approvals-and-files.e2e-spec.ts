import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import type { PageWatch } from '../support/browser';
import { buildConsole, launchChromium, signIn, watchPage } from '../support/browser';
import type { Harness } from '../support/service-harness';
import { API_KEY, OTHER_API_KEY, startHarness, waitFor } from '../support/service-harness';

// The web console in a real browser against the real all-in-one service (scripted model): the
// issue's flows from sign-in to download, cancel and a reload mid-turn.

/** Set to a folder to write docs/guide/console.md's screenshots there (docs/ in the repository). */
const SCREENSHOTS = process.env.CONSOLE_SCREENSHOTS_DIR;

describe('Web console: approvals, follow-ups, files, cancel, reload', () => {
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
    context = await browser.newContext({ acceptDownloads: true, viewport: { width: 1100, height: 900 } });
    context.setDefaultTimeout(15_000);
    page = await context.newPage();
    watch = await watchPage(context, page);
  });
  afterEach(async () => {
    expect(await watch.violations()).toEqual([]);
    expect(watch.consoleErrors).toEqual([]);
    await context.close();
  });

  /** The id of the task the page shows (its URL is #/tasks/<id>). */
  const shownTaskId = async () => {
    await page.waitForURL(/#\/tasks\/task_/);
    return decodeURIComponent(new URL(page.url()).hash.split('/')[2]);
  };
  const toolCards = () => page.getByRole('article');
  /** The card of a tool call, by tool name and position among that tool's calls (the service names calls itself). */
  const card = (toolName: string, nth = 0) => page.getByRole('article', { name: `Tool call ${toolName}`, exact: true }).nth(nth);

  it('shows the API message for a wrong key and keeps the right one in sessionStorage only', async () => {
    const refused = await h.api('/api/v1/tasks', { key: 'not-a-key' });
    await page.goto(`${h.url}/console`);
    await page.getByLabel('API key').fill('not-a-key');
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await expect(page.getByRole('alert').textContent()).resolves.toBe(refused.body.error.message);

    await page.getByLabel('API key').fill(API_KEY);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByRole('heading', { name: 'Tasks' }).waitFor();
    const storage = await page.evaluate<{ session: object; local: object; cookie: string }>(
      '({ session: { ...sessionStorage }, local: { ...localStorage }, cookie: document.cookie })',
    );
    expect(Object.values(storage.session)).toEqual([API_KEY]);
    expect(storage.local).toEqual({});
    expect(storage.cookie).toBe('');
    expect(page.url()).not.toContain(API_KEY);

    // Another tenant's task is as unknown as a made-up id: the API's 404 message, once.
    const { id: othersTask } = await h.client(OTHER_API_KEY).tasks.create({ message: 'not yours' });
    const notFound = await h.api(`/api/v1/tasks/${othersTask}`);
    expect(notFound.status).toBe(404);
    await page.goto(`${h.url}/console#/tasks/${othersTask}`);
    await expect(page.getByRole('alert').textContent()).resolves.toBe(notFound.body.error.message);
    expect(await page.content()).not.toContain('not yours');
  });

  it('creates a task with a file and manual approval, approves once, always-allows, denies, follows up and downloads', async () => {
    const upload = 'hello from the browser\n';
    const report = 'name,count\n"a, quoted",1\nb,2\n';
    h.model.script(
      { toolCalls: [{ name: 'read_file', arguments: { path: 'input.txt' } }] },
      { toolCalls: [{ name: 'list_files', arguments: {} }] },
      { toolCalls: [{ name: 'write_file', arguments: { path: 'downloads/denied.txt', content: 'no' } }] },
      { text: 'First turn done: one read, one listing, one declined.' },
    );
    await signIn(page, h.url);
    await page.getByRole('link', { name: 'New task' }).first().click();
    await page.getByLabel('Message').fill('Read input.txt and report');
    await page.getByLabel('Files').setInputFiles({ name: 'input.txt', mimeType: 'text/plain', buffer: Buffer.from(upload) });
    await page.getByLabel('Ask before running tools').check();
    await page.getByRole('button', { name: 'Run', exact: true }).click();
    const id = await shownTaskId();

    // The first call appears live, waiting for a decision.
    await card('read_file').getByRole('button', { name: 'Approve once' }).waitFor();
    expect(await card('read_file').textContent()).toContain('"path": "input.txt"');
    if (SCREENSHOTS) await page.screenshot({ path: join(SCREENSHOTS, 'console-task-approval.png'), fullPage: true });
    await card('read_file').getByRole('button', { name: 'Approve once' }).click();
    await card('read_file').locator('pre.output').filter({ hasText: 'hello from the browser' }).waitFor();
    expect(await card('read_file').locator('summary').textContent()).toMatch(/success.*ms/);

    await card('list_files').getByRole('button', { name: 'Always allow' }).click();
    await card('list_files').locator('pre.output').filter({ hasText: 'input.txt' }).waitFor();

    await card('write_file').getByRole('button', { name: 'Deny' }).click();
    await card('write_file').locator('summary').filter({ hasText: 'cancelled' }).waitFor();
    await page.getByText('First turn done: one read, one listing, one declined.').waitFor();
    await page.locator('.badge', { hasText: 'completed' }).waitFor();
    expect(await toolCards().count()).toBe(3);
    expect((await h.client().tasks.get(id)).pendingApprovals).toEqual([]);

    // The follow-up: list_files now runs by the rule, write_file still asks.
    h.model.script(
      { toolCalls: [{ name: 'list_files', arguments: {} }] },
      { toolCalls: [{ name: 'write_file', arguments: { path: 'downloads/report.csv', content: report } }] },
      { text: 'Report written.' },
    );
    await page.getByLabel('Follow-up').fill('Now write the report');
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    await card('list_files', 1).locator('pre.output').waitFor();
    expect(await card('list_files', 1).getByRole('button', { name: 'Approve once' }).count()).toBe(0);
    await card('write_file', 1).getByRole('button', { name: 'Approve once' }).click();
    await page.getByText('Report written.').waitFor();

    // The artifact: a link named by its path; the saved bytes are the file's.
    const link = page.getByRole('link', { name: 'downloads/report.csv', exact: true });
    await link.waitFor();
    const [download] = await Promise.all([page.waitForEvent('download'), link.click()]);
    expect(download.suggestedFilename()).toBe('report.csv');
    expect(await readFile(await download.path())).toEqual(Buffer.from(report));
    // The CSV preview is a table of text cells.
    await page.getByRole('button', { name: 'Preview downloads/report.csv' }).click();
    await page.getByRole('cell', { name: 'a, quoted' }).waitFor();
    await page
      .locator('[aria-label="Usage"]')
      .filter({ hasText: /[1-9]\d* tokens/ })
      .waitFor();

    // The list shows it, newest first, as a link starting with its first message.
    await page.getByRole('link', { name: 'Tasks', exact: true }).click();
    const first = page.getByRole('list', { name: 'Tasks' }).getByRole('listitem').first();
    await first.getByRole('link', { name: /^Read input\.txt and report/ }).waitFor();
  });

  it('cancels a running task', async () => {
    h.model.script({ hang: true });
    await signIn(page, h.url);
    await page.getByRole('link', { name: 'New task' }).first().click();
    await page.getByLabel('Message').fill('This one never answers');
    await page.getByRole('button', { name: 'Add variable' }).click();
    await page.getByLabel('Environment name 1').fill('REGION');
    await page.getByLabel('Environment value 1').fill('eu-west');
    await page.getByRole('button', { name: 'Add secret' }).click();
    await page.getByLabel('Secrets name 1').fill('API_TOKEN');
    expect(await page.getByLabel('Secrets value 1').getAttribute('type')).toBe('password');
    await page.getByLabel('Secrets value 1').fill('sekret-value-4711');
    await page.getByRole('button', { name: 'Run', exact: true }).click();
    const id = await shownTaskId();
    // The secret's name is shown, its value never again; the env variable by its name.
    await page.locator('.facts', { hasText: 'API_TOKEN (values hidden)' }).waitFor();
    expect(await page.locator('.facts').textContent()).toContain('REGION');
    expect(await page.content()).not.toContain('sekret-value-4711');
    expect(await h.client().tasks.get(id)).toMatchObject({ secretNames: ['API_TOKEN'], envKeys: ['REGION'] });
    await page.locator('.badge', { hasText: 'running' }).waitFor();
    await page.getByRole('button', { name: 'Cancel task' }).click();
    await page.locator('.badge', { hasText: 'cancelled' }).waitFor();
    await page.getByText('Turn cancelled').waitFor();
    expect((await h.client().tasks.get(id)).status).toBe('cancelled');
    expect(await page.getByRole('button', { name: 'Cancel task' }).count()).toBe(0);
  });

  it('stops a running turn and sends ("Stop and send"), then undoes the next one and sends ("Undo turn and send")', async () => {
    h.model.script({ hang: true });
    const { id } = await h.client().tasks.create({ message: 'Take your time' });
    await signIn(page, h.url);
    await page.goto(`${h.url}/console#/tasks/${id}`);
    await page.locator('.badge', { hasText: 'running' }).waitFor();

    h.model.script({ hang: true });
    await page.getByLabel('Follow-up').fill('Do this instead');
    await page.getByRole('button', { name: 'Stop and send', exact: true }).click();
    await page.getByText('Turn cancelled').waitFor();
    await waitFor(async () => ((await h.client().tasks.get(id)).turn === 2 ? true : undefined), 10_000, 'turn 2 to run');
    await page.getByText('Do this instead').waitFor();

    h.model.script({ text: 'As if turn 2 never was.' });
    await page.getByLabel('Follow-up').fill('Forget that');
    await page.getByRole('button', { name: 'Undo turn and send', exact: true }).click();
    await page.getByText(/^Turn undone: events \d+ to \d+/).waitFor();
    await page.locator('.badge', { hasText: 'completed' }).waitFor();
    await page.getByText('As if turn 2 never was.').waitFor();
    const done = [];
    for await (const event of h.client().tasks.history(id))
      if (event.type === 'done' || event.type === 'rolled_back') done.push(event.type);
    expect(done).toEqual(['done', 'done', 'rolled_back', 'done']);
    // Nothing runs now: only Send is offered.
    expect(await page.getByRole('button', { name: 'Stop and send' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Undo turn and send' }).count()).toBe(0);
  });

  it('shows every event once after a reload mid-turn, and the history from event 1', async () => {
    h.model.script({ toolCalls: [{ name: 'list_files', arguments: { path: '.' } }] }, { text: 'Listed after the reload.' });
    await signIn(page, h.url);
    await page.getByRole('link', { name: 'New task' }).first().click();
    await page.getByLabel('Message').fill('Reload me');
    await page.getByLabel('Ask before running tools').check();
    await page.getByRole('button', { name: 'Run', exact: true }).click();
    const id = await shownTaskId();
    await card('list_files').getByRole('button', { name: 'Approve once' }).waitFor();

    await page.reload();
    await card('list_files').getByRole('button', { name: 'Approve once' }).waitFor();
    await card('list_files').getByRole('button', { name: 'Approve once' }).click();
    await page.getByText('Listed after the reload.').waitFor();
    await page.locator('.badge', { hasText: 'completed' }).waitFor();
    expect(await page.getByLabel('User message').count()).toBe(1);
    expect(await toolCards().count()).toBe(1);
    expect(await page.getByLabel('Model text').allTextContents()).toEqual(['Listed after the reload.']);

    // The audit trail: ids 1..n, each once, the same events the API replays, each with the time
    // the service recorded it (the events endpoint's `at`), tool calls and results included.
    const events: { id: number; type: string }[] = [];
    for await (const event of h.client().tasks.stream(id, { after: 0 })) events.push(event);
    const recorded: { id: number; at: string }[] = [];
    for await (const record of h.client().tasks.history(id)) recorded.push(record);
    expect(recorded.map((record) => record.id)).toEqual(events.map((event) => event.id));
    await page.getByRole('link', { name: 'History' }).click();
    const rows = page.getByRole('table', { name: 'Events' }).locator('tbody tr');
    await waitFor(async () => (await rows.count()) === events.length || undefined, 10_000, 'every event in the history');
    const shown = await rows.evaluateAll((trs) =>
      trs.map((tr) => [Number(tr.children[0].textContent), tr.children[2].textContent, tr.children[1].querySelector('time')?.dateTime]),
    );
    expect(shown).toEqual(events.map((event, i) => [event.id, event.type, recorded[i].at]));
    expect(shown.map(([eventId]) => eventId)).toEqual(events.map((_, i) => i + 1));
    expect(shown.map(([, type]) => type)).toEqual(expect.arrayContaining(['tool_call', 'tool_result']));
    expect(await page.getByText('received').count()).toBe(0);

    // Opened while a turn waits for approval, the page follows it: the rest of the turn appears
    // live, with recorded times too.
    h.model.script({ toolCalls: [{ name: 'list_files', arguments: { path: '.' } }] }, { text: 'Live in the history.' });
    await h.client().tasks.sendMessage(id, 'Once more');
    const ats = h.client();
    const pending = await waitFor(async () => (await ats.tasks.get(id)).pendingApprovals[0], 15_000, 'the follow-up waiting');
    await page.reload();
    const before = (await ats.tasks.get(id)).lastEventId;
    await waitFor(async () => (await rows.count()) === before || undefined, 10_000, 'the history up to the waiting call');
    await ats.tasks.approve(id, pending.callId);
    await waitFor(async () => (await ats.tasks.get(id)).status === 'completed' || undefined, 15_000, 'the follow-up done');
    const all: { id: number; at: string }[] = [];
    for await (const record of ats.tasks.history(id)) all.push(record);
    expect(all.length).toBeGreaterThan(before);
    await waitFor(async () => (await rows.count()) === all.length || undefined, 10_000, 'the live events in the history');
    const live = await rows.evaluateAll((trs) =>
      trs.map((tr) => [Number(tr.children[0].textContent), tr.children[1].querySelector('time')?.dateTime]),
    );
    expect(live).toEqual(all.map((record) => [record.id, record.at]));
  });

  // Last: the tasks it creates run on the model's default reply, which must not take the scripted ones above.
  it('lists newest first, loads more on scroll, and shows hidden tasks on request', async () => {
    const ats = h.client();
    for (let i = 0; i < 30; i++) await ats.tasks.create({ message: `Bulk task ${i}` });
    await ats.tasks.create({ message: 'A hidden task', showInHistory: false });
    const total = (await ats.tasks.listPage({ limit: 100 })).tasks.length;
    expect(total).toBeGreaterThan(30);

    await signIn(page, h.url);
    const items = page.getByRole('list', { name: 'Tasks' }).getByRole('listitem');
    await items.first().getByRole('link', { name: 'Bulk task 29' }).waitFor();
    expect(await items.count()).toBe(25);
    expect(await page.getByRole('link', { name: 'A hidden task' }).count()).toBe(0);
    await items.last().scrollIntoViewIfNeeded();
    await waitFor(async () => (await items.count()) === total || undefined, 10_000, 'the next page');

    await page.getByLabel('Show hidden').check();
    await items.first().getByRole('link', { name: 'A hidden task' }).waitFor();
    expect(await items.first().textContent()).toContain('hidden');
    if (SCREENSHOTS) {
      await mkdir(SCREENSHOTS, { recursive: true });
      await page.screenshot({ path: join(SCREENSHOTS, 'console-task-list.png') });
    }
  });
});
