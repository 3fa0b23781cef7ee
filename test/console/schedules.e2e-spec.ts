import type { Browser, BrowserContext, Page } from 'playwright-core';
import type { PageWatch } from '../support/browser';
import { buildConsole, launchChromium, signIn, watchPage } from '../support/browser';
import type { Harness } from '../support/service-harness';
import { startHarness, waitFor } from '../support/service-harness';

// The console's Schedules page in a real browser against the all-in-one service: create (a
// refused cron shows the API's message), pause, resume, delete; a secret's value never shown.

const CANARY = 'console-schedule-secret-9a0e6b2d';

describe('Web console: schedules', () => {
  let h: Harness;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let watch: PageWatch;
  jest.setTimeout(90_000);

  beforeAll(async () => {
    buildConsole();
    h = await startHarness({ SCHEDULE_MIN_INTERVAL_MS: '1000' });
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await h?.close();
  });
  beforeEach(async () => {
    context = await browser.newContext({ viewport: { width: 1100, height: 900 } });
    context.setDefaultTimeout(15_000);
    page = await context.newPage();
    watch = await watchPage(context, page);
  });
  afterEach(async () => {
    expect(await watch.violations()).toEqual([]);
    await context.close();
  });

  it('names the schedule on the page of a task it started', async () => {
    const schedule = (
      await h.api('/api/v1/schedules', { method: 'POST', json: { cron: '* * * * * *', task: { message: 'every second' } } })
    ).body.data;
    const run = await waitFor(async () => {
      const runs = (await h.api(`/api/v1/schedules/${schedule.id}/runs`)).body.data.runs as { taskId?: string }[];
      return runs.find((r) => r.taskId);
    }, 10_000);
    await h.api(`/api/v1/schedules/${schedule.id}`, { method: 'DELETE' });
    await signIn(page, h.url);
    await page.goto(`${h.url}/console#/tasks/${run.taskId}`);
    await expect(page.getByLabel('Started by').textContent()).resolves.toBe(`schedule ${schedule.id}`);
  });

  it('creates a schedule, pauses, resumes and deletes it, and shows why a cron is refused', async () => {
    await signIn(page, h.url);
    await page.getByRole('link', { name: 'Schedules' }).click();
    await page.getByRole('heading', { name: 'Schedules' }).waitFor();
    await page.getByText('No schedules yet.').waitFor();

    const form = page.getByRole('form', { name: 'New schedule' });
    await form.getByLabel('Cron').fill('0 0 30 2 *');
    await form.getByLabel('Time zone').fill('Europe/Paris');
    await form.getByLabel('Message').fill('Morning report');
    await form.getByRole('button', { name: 'Create schedule' }).click();
    await expect(form.getByRole('alert').textContent()).resolves.toContain('never fires');

    await form.getByLabel('Cron').fill('0 9 * * MON-FRI');
    await form.getByRole('button', { name: 'Add secret' }).click();
    await form.getByLabel('Secrets name 1').fill('REPORT_TOKEN');
    await form.getByLabel('Secrets value 1').fill(CANARY);
    await form.getByLabel('Max tokens').fill('5000');
    await form.getByLabel('Max cost (USD)').fill('0.5');
    await form.getByRole('button', { name: 'Create schedule' }).click();
    const item = page.getByRole('listitem', { name: /^Schedule sched_/ });
    await item.waitFor();
    await expect(item.textContent()).resolves.toContain('Morning report');
    await expect(item.textContent()).resolves.toContain('Europe/Paris');
    expect(await page.content()).not.toContain(CANARY);
    const [schedule] = (await h.api('/api/v1/schedules')).body.data.schedules;
    expect(schedule).toMatchObject({
      cron: '0 9 * * MON-FRI',
      timezone: 'Europe/Paris',
      task: { secretNames: ['REPORT_TOKEN'], maxTokens: 5000, maxCostUsd: 0.5 },
    });
    // As the API has them, the budgets on the schedule's line.
    await expect(item.getByLabel('Budget of each run').textContent()).resolves.toBe('budget of each run: 5000 tokens, $0.5000');

    await item.getByRole('button', { name: 'Pause' }).click();
    await item.getByText('paused').waitFor();
    expect((await h.api(`/api/v1/schedules/${schedule.id}`)).body.data.paused).toBe(true);
    await item.getByRole('button', { name: 'Resume' }).click();
    await item.getByRole('button', { name: 'Pause' }).waitFor();
    expect((await h.api(`/api/v1/schedules/${schedule.id}`)).body.data.paused).toBe(false);

    await item.getByRole('button', { name: 'Delete' }).click();
    await page.getByText('No schedules yet.').waitFor();
    expect((await h.api(`/api/v1/schedules/${schedule.id}`)).status).toBe(404);
  });
});
