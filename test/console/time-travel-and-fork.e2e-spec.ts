import { readFile } from 'node:fs/promises';
import type { AtsClient, TaskEventRecord } from '@agentic-task-service/client';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import type { PageWatch } from '../support/browser';
import { buildConsole, launchChromium, signIn, watchPage } from '../support/browser';
import type { Harness } from '../support/service-harness';
import { twoStepSource } from '../support/two-step-source';
import { startHarness, waitFor } from '../support/service-harness';

// Time travel and forks in the web console, in a real browser against the real service (scripted
// model): each step's changes under its result, the files as of a step with their bytes of then,
// and "Fork from here" after a result and after a `done` with a message.

describe('Web console: changes per step, files at a step, fork from here', () => {
  let h: Harness;
  let ats: AtsClient;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let watch: PageWatch;
  let source: string;
  let results: TaskEventRecord[];
  let doneId: number;
  jest.setTimeout(90_000);

  beforeAll(async () => {
    buildConsole();
    h = await startHarness();
    ats = h.client();
    browser = await launchChromium();
    ({ source, results, doneId } = await twoStepSource(h));
    expect(results).toHaveLength(2);
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
    await signIn(page, h.url);
  });
  afterEach(async () => {
    expect(await watch.violations()).toEqual([]);
    expect(watch.consoleErrors).toEqual([]);
    await context.close();
  });

  const card = (nth: number) => page.getByRole('article', { name: 'Tool call shell', exact: true }).nth(nth);
  const changesOf = (scope: ReturnType<Page['locator']>) => scope.getByRole('list', { name: 'Workspace changes' }).getByRole('listitem');
  /** The id of the task the page shows, once it is not `other`. */
  const shownTaskIdOtherThan = async (other: string) => {
    await page.waitForURL((url) => /#\/tasks\/task_/.test(url.hash) && !url.hash.includes(other));
    return decodeURIComponent(new URL(page.url()).hash.split('/')[2]);
  };

  it('lists each step’s changes under its result, on the task page and in the history', async () => {
    await page.goto(`${h.url}/console#/tasks/${source}`);
    await changesOf(card(1)).first().waitFor();
    expect(await changesOf(card(0)).allTextContents()).toEqual(['first.txt created · 3 B']);
    expect(await changesOf(card(1)).allTextContents()).toEqual(['first.txt modified · 7 B', 'second.txt created · 3 B']);

    await page.getByRole('link', { name: 'History' }).click();
    const row = (id: number) => page.locator(`tr[data-event-id="${id}"]`);
    await changesOf(row(results[1].id)).first().waitFor();
    expect(await changesOf(row(results[0].id)).allTextContents()).toEqual(['first.txt created · 3 B']);
    expect(await changesOf(row(results[1].id)).allTextContents()).toEqual(['first.txt modified · 7 B', 'second.txt created · 3 B']);
  });

  it('shows the files as of the first step only, and downloads their bytes of then; now shows both', async () => {
    await page.goto(`${h.url}/console#/tasks/${source}`);
    await card(0).getByRole('button', { name: 'Files at this step' }).click();
    const files = card(0).getByRole('region', { name: `Files after event ${results[0].id}` });
    const first = files.getByRole('button', { name: 'Download first.txt', exact: true });
    await first.waitFor();
    expect(await files.getByRole('listitem').allTextContents()).toEqual(['first.txt 3 B']);
    const [download] = await Promise.all([page.waitForEvent('download'), first.click()]);
    expect(download.suggestedFilename()).toBe('first.txt');
    expect((await readFile(await download.path())).toString()).toBe('one');

    await page.getByRole('button', { name: 'Workspace files now' }).click();
    const now = page.getByRole('region', { name: 'Files now' });
    await now.getByRole('button', { name: 'Download second.txt', exact: true }).waitFor();
    expect(await now.getByRole('listitem').allTextContents()).toEqual(['first.txt 7 B', 'second.txt 3 B']);
    const [latest] = await Promise.all([
      page.waitForEvent('download'),
      now.getByRole('button', { name: 'Download first.txt', exact: true }).click(),
    ]);
    expect((await readFile(await latest.path())).toString()).toBe('changed');
  });

  it('forks after the first result: the fork’s page says where it came from, and it goes on from there', async () => {
    h.model.script({ text: 'The fork went on.' });
    await page.goto(`${h.url}/console#/tasks/${source}`);
    await card(0).getByRole('button', { name: 'Fork from here' }).click();
    const fork = await shownTaskIdOtherThan(source);
    expect(fork).not.toBe(source);
    const origin = page.getByLabel('Forked from');
    await origin.filter({ hasText: `after event ${results[0].id}` }).waitFor();
    expect(await origin.textContent()).toBe(`${source} after event ${results[0].id}`);
    expect(await origin.getByRole('link').getAttribute('href')).toBe(`#/tasks/${source}`);
    expect((await ats.tasks.get(fork)).forkedFrom).toEqual({ taskId: source, eventId: results[0].id });
    // The copy holds the first step only; the model is asked again from there.
    await page.getByText('The fork went on.').waitFor();
    expect(await page.getByRole('article', { name: 'Tool call shell', exact: true }).count()).toBe(1);
    await page.getByText(`Forked from ${source} after event ${results[0].id}`).waitFor();
    const forkedFiles: string[] = [];
    for await (const file of ats.files.listAll(fork)) forkedFiles.push(file.path);
    expect(forkedFiles).toEqual(['first.txt']);
  });

  it('forks after the done with a message, which starts a turn in the fork', async () => {
    h.model.script({ text: 'A new turn in the fork.' });
    await page.goto(`${h.url}/console#/tasks/${source}`);
    const actions = page.getByRole('group', { name: `Event ${doneId} actions` });
    await actions.getByRole('button', { name: 'Fork from here' }).click();
    await actions.getByLabel('Message for the fork (optional)').fill('Go on in the fork');
    await actions.getByRole('button', { name: 'Fork', exact: true }).click();
    const fork = await shownTaskIdOtherThan(source);
    await page.getByText('A new turn in the fork.').waitFor();
    expect(await page.getByLabel('User message').allTextContents()).toEqual(['Write two files', 'Go on in the fork']);
    await waitFor(async () => (await ats.tasks.get(fork)).status === 'completed' || undefined, 15_000, 'the fork’s turn');
    const task = await ats.tasks.get(fork);
    expect(task).toMatchObject({ forkedFrom: { taskId: source, eventId: doneId }, turn: 2 });
    // The source is unchanged.
    expect((await ats.tasks.get(source)).turn).toBe(1);
  });
});
