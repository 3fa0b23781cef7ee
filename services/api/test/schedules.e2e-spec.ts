import { randomBytes } from 'node:crypto';
import type { WebhookReceiver } from '@app/webhooks/testing/webhook-receiver';
import { startWebhookReceiver } from '@app/webhooks/testing/webhook-receiver';
import { ScheduleBook } from '../src/schedules/schedule-book';
import { runTaskId } from '../src/schedules/schedule-firing';
import type { Harness } from '../../../test/support/service-harness';
import { OTHER_API_KEY, startHarness, waitFor } from '../../../test/support/service-harness';

// Schedules (docs/api.md "Schedules") through the whole service, in both modes: the distributed
// one runs two API instances, each a firer, so every "exactly once" here is also across instances.
// SCHEDULE_MIN_INTERVAL_MS is lowered to 2 s so that a 6-field cron can fire every 2 seconds
// (and one firing every second is too tight).

const EVERY_2S = '*/2 * * * * *';

interface Run {
  dueAt: string;
  firedAt?: string;
  taskId?: string;
  outcome: 'started' | 'skipped' | 'failed';
  reason?: string;
}

describe('Schedules', () => {
  let h: Harness;
  let receiver: WebhookReceiver;
  beforeAll(async () => {
    receiver = await startWebhookReceiver((_request, res) => res.writeHead(204).end());
    h = await startHarness({
      SCHEDULE_MIN_INTERVAL_MS: '2000',
      MAX_SCHEDULES_PER_TENANT: '6',
      WEBHOOK_SECRET: `whsec_${randomBytes(32).toString('base64')}`,
      WEBHOOK_ALLOW_HOSTS: `127.0.0.1:${receiver.port}`,
    });
  });
  afterAll(async () => {
    await h.close();
    await receiver.close();
  });

  const create = async (body: Record<string, unknown>, key?: string) => {
    const res = await h.api('/api/v1/schedules', { method: 'POST', json: body, ...(key ? { key } : {}) });
    return res;
  };
  const runs = async (id: string): Promise<Run[]> => {
    const res = await h.api(`/api/v1/schedules/${id}/runs?limit=100`);
    expect(res.status).toBe(200);
    return res.body.data.runs as Run[];
  };
  const remove = (id: string) => h.api(`/api/v1/schedules/${id}`, { method: 'DELETE' });
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

  it('fires a seconds cron on time, once per due time, each run a task carrying scheduleId and the cost budget, secrets never shown', async () => {
    const created = await create({
      cron: EVERY_2S,
      task: { message: 'tick', secrets: { TOKEN: 'sched-secret-value-123' }, env: { REGION: 'eu' }, maxCostUsd: 0.25 },
      overlap: 'enqueue',
    });
    expect(created.status).toBe(201);
    const schedule = created.body.data;
    expect(schedule).toMatchObject({
      id: expect.stringMatching(/^sched_[a-f0-9]{32}$/),
      cron: EVERY_2S,
      timezone: 'UTC',
      task: { message: 'tick', secretNames: ['TOKEN'], envKeys: ['REGION'], maxCostUsd: 0.25, maxTokens: null },
      target: null,
      overlap: 'enqueue',
      paused: false,
      lastRunAt: null,
    });
    expect(JSON.stringify(created.body)).not.toContain('sched-secret-value-123');
    const started = await waitFor(async () => {
      const list = (await runs(schedule.id)).filter((r) => r.outcome === 'started');
      return list.length >= 3 ? list : undefined;
    }, 15_000);
    await remove(schedule.id);
    const all = await runs(schedule.id).catch(() => undefined);
    expect(all).toBeUndefined(); // deleted: 404 (expect inside runs fails)
    const dueTimes = started.map((r) => r.dueAt);
    expect(new Set(dueTimes).size).toBe(dueTimes.length);
    for (const run of started) {
      expect(new Date(run.dueAt).getUTCMilliseconds()).toBe(0);
      // On time: fired within a second and a half of the due time.
      expect(new Date(run.firedAt!).getTime() - new Date(run.dueAt).getTime()).toBeLessThan(1500);
      expect(new Date(run.dueAt).getUTCSeconds() % 2).toBe(0);
      const task = await h.api(`/api/v1/tasks/${run.taskId}`);
      expect(task.status).toBe(200);
      expect(task.body.data).toMatchObject({ scheduleId: schedule.id, secretNames: ['TOKEN'], envKeys: ['REGION'], maxCostUsd: 0.25 });
      expect(task.body.data.messages[0].text).toBe('tick');
    }
  });

  it("sends a scheduled task's webhooks like any task's, to the schedule's webhookUrl", async () => {
    const { body } = await create({ cron: EVERY_2S, task: { message: 'hooked', webhookUrl: `${receiver.origin}/hooks/schedule` } });
    const id = body.data.id;
    expect(body.data.task.webhookUrl).toBe(`${receiver.origin}/hooks/schedule`);
    const started = await waitFor(async () => (await runs(id)).find((r) => r.outcome === 'started'), 10_000);
    await remove(id);
    const message = await waitFor(
      () =>
        receiver.received
          .filter((r) => r.url === '/hooks/schedule')
          .map((r) => JSON.parse(r.body))
          .find((m) => m.type === 'task.completed' && m.data.taskId === started.taskId),
      15_000,
    );
    expect(message.data.taskId).toBe(started.taskId);
  });

  it('runs no due time while paused, and goes on after a resume', async () => {
    const { body } = await create({ cron: EVERY_2S, task: { message: 'p' }, paused: true, overlap: 'enqueue' });
    const id = body.data.id;
    expect(body.data).toMatchObject({ paused: true, nextRunAt: null });
    await sleep(4500);
    expect(await runs(id)).toEqual([]);
    const resumed = await h.api(`/api/v1/schedules/${id}`, { method: 'PATCH', json: { paused: false } });
    expect(resumed.status).toBe(200);
    expect(resumed.body.data.paused).toBe(false);
    expect(resumed.body.data.nextRunAt).toEqual(expect.any(String));
    const first = await waitFor(async () => (await runs(id))[0], 10_000);
    // Nothing from the paused time is run or recorded.
    expect(new Date(first.dueAt).getTime()).toBeGreaterThan(new Date(resumed.body.data.updatedAt).getTime());
    const paused = await h.api(`/api/v1/schedules/${id}`, { method: 'PATCH', json: { paused: true } });
    expect(paused.body.data).toMatchObject({ paused: true, nextRunAt: null });
    const count = (await runs(id)).length;
    await sleep(4500);
    expect((await runs(id)).length).toBe(count);
    await remove(id);
  });

  it('skips a due time whose previous run is still running (overlap: skip), saying why', async () => {
    h.model.script({ text: 'slow', delayMs: 4000 });
    const { body } = await create({ cron: EVERY_2S, task: { message: 'long' } });
    const id = body.data.id;
    const list = await waitFor(async () => {
      const r = await runs(id);
      return r.some((x) => x.outcome === 'skipped') ? r : undefined;
    }, 15_000);
    await remove(id);
    const first = list[list.length - 1];
    expect(first.outcome).toBe('started');
    const skipped = list.find((r) => r.outcome === 'skipped')!;
    expect(skipped.reason).toContain(`${first.taskId}, is still running`);
    expect(skipped.taskId).toBeUndefined();
  });

  // Reaches into the process to record a run without its task, as a crash between the two leaves it:
  // all-in-one only (not defined, rather than skipped, in the distributed run).
  const inOneProcess = process.env.ATS_E2E_MODE === 'distributed' ? () => undefined : it;
  inOneProcess('creates the task of a run recorded before a crash, once, with the id derived from the due time', async () => {
    const { body } = await create({ cron: '0 0 1 1 *', task: { message: 'recovered' }, overlap: 'enqueue' });
    const id = body.data.id;
    const dueAt = new Date(Math.ceil(Date.now() / 1000) * 1000 + 1000).toISOString();
    const taskId = runTaskId(id, dueAt);
    await h.app.get(ScheduleBook).execute(id, { type: 'RecordScheduleRun', data: { dueAt, at: dueAt, outcome: 'fired', taskId } });
    expect((await h.api(`/api/v1/tasks/${taskId}`)).status).toBe(404);
    // The next due time the firer looks at starts the missing task first.
    await h.api(`/api/v1/schedules/${id}`, { method: 'PATCH', json: { cron: EVERY_2S } });
    const task = await waitFor(async () => {
      const res = await h.api(`/api/v1/tasks/${taskId}`);
      return res.status === 200 ? res.body.data : undefined;
    }, 10_000);
    expect(task).toMatchObject({ scheduleId: id, messages: [{ text: 'recovered' }] });
    await waitFor(async () => ((await runs(id)).length >= 2 ? true : undefined), 10_000);
    await remove(id);
    const all = (await h.api('/api/v1/tasks?limit=100&includeHidden=true')).body.data.tasks as { id: string }[];
    expect(all.filter((t) => t.id === taskId)).toHaveLength(1);
  });

  it('sends each run as a follow-up into the target task', async () => {
    const task = await h.client().tasks.create({ message: 'the target' });
    await waitFor(async () => ((await h.client().tasks.get(task.id)).status === 'completed' ? true : undefined), 15_000);
    const { status, body } = await create({ cron: EVERY_2S, task: { message: 'again' }, target: task.id, overlap: 'skip' });
    expect(status).toBe(201);
    const id = body.data.id;
    expect(body.data.target).toBe(task.id);
    await waitFor(async () => ((await runs(id)).filter((r) => r.outcome === 'started').length >= 2 ? true : undefined), 15_000);
    await remove(id);
    const view = await h.client().tasks.get(task.id);
    const followUps = view.messages.filter((m) => m.text === 'again');
    const started = (await h.api(`/api/v1/tasks/${task.id}`)).body.data;
    expect(followUps.length).toBeGreaterThanOrEqual(2);
    expect(started.scheduleId).toBeNull();
    // A target carries only the message and the budget.
    const refused = await create({ cron: EVERY_2S, task: { message: 'x', env: { A: 'b' } }, target: task.id });
    expect(refused.status).toBe(400);
    // Another tenant cannot aim a schedule at this task.
    const foreign = await create({ cron: EVERY_2S, task: { message: 'x' }, target: task.id }, OTHER_API_KEY);
    expect(foreign.status).toBe(404);
  });

  it('is driven whole by the typed client: schedules.create, get, list, pause, resume, update, runs, delete', async () => {
    const client = h.client();
    const created = await client.schedules.create({ cron: '0 0 1 1 *', timezone: 'Europe/Paris', task: { message: 'yearly' } });
    expect(created.nextRunAt).toMatch(/-12-31T23:00:00.000Z$/);
    expect((await client.schedules.get(created.id)).id).toBe(created.id);
    const listed: string[] = [];
    for await (const s of client.schedules.list({ limit: 1 })) listed.push(s.id);
    expect(listed).toContain(created.id);
    expect((await client.schedules.pause(created.id)).paused).toBe(true);
    expect((await client.schedules.resume(created.id)).paused).toBe(false);
    expect((await client.schedules.update(created.id, { cron: '0 12 * * *', timezone: 'UTC' })).nextRunAt).toMatch(/T12:00:00.000Z$/);
    expect((await client.schedules.runsPage(created.id)).runs).toEqual([]);
    expect(await client.schedules.delete(created.id)).toEqual({ id: created.id, deleted: true });
    await expect(client.schedules.get(created.id)).rejects.toMatchObject({ code: 'NOT_FOUND', status: 404 });
    await expect(client.schedules.create({ cron: 'every day', task: { message: 'x' } })).rejects.toMatchObject({
      code: 'VALIDATION_ERROR',
      status: 400,
    });
  });

  it("answers another tenant's schedule 404 on every route, as a missing one", async () => {
    const { body } = await create({ cron: '0 0 1 1 *', task: { message: 'mine' } });
    const id = body.data.id;
    for (const [path, method, json] of [
      [`/api/v1/schedules/${id}`, 'GET'],
      [`/api/v1/schedules/${id}`, 'PATCH', { paused: true }],
      [`/api/v1/schedules/${id}`, 'DELETE'],
      [`/api/v1/schedules/${id}/runs`, 'GET'],
      [`/api/v1/schedules/sched_${'0'.repeat(32)}`, 'GET'],
    ] as const) {
      const res = await h.api(path, { method, key: OTHER_API_KEY, ...(json ? { json } : {}) });
      expect(res.status).toBe(404);
      expect(res.body).toMatchObject({ success: false, error: { code: 'NOT_FOUND' } });
    }
    const other = await h.api('/api/v1/schedules', { key: OTHER_API_KEY });
    expect(other.body.data.schedules.map((s: { id: string }) => s.id)).not.toContain(id);
    const mine = await h.api('/api/v1/schedules');
    expect(mine.body.data.schedules.map((s: { id: string }) => s.id)).toContain(id);
    expect((await h.api(`/api/v1/schedules/${id}`)).body.data.paused).toBe(false);
    expect((await remove(id)).body).toEqual({ success: true, data: { id, deleted: true } });
  });

  it.each([
    ['a bad cron', { cron: '61 * * * *', task: { message: 'x' } }, 'cron'],
    ['a cron of 4 fields', { cron: '* * * *', task: { message: 'x' } }, '5 fields'],
    ['a huge cron', { cron: `${'1,'.repeat(5000)}1 * * * *`, task: { message: 'x' } }, 'cron'],
    ['a bad timezone', { cron: '0 * * * *', timezone: 'Mars/Olympus', task: { message: 'x' } }, 'IANA'],
    ['a cron tighter than SCHEDULE_MIN_INTERVAL_MS', { cron: '* * * * * *', task: { message: 'x' } }, 'SCHEDULE_MIN_INTERVAL_MS'],
    ['a cron tight once a minute', { cron: '0,1 * * * * *', task: { message: 'x' } }, 'SCHEDULE_MIN_INTERVAL_MS'],
    ['a cron that never fires', { cron: '0 0 30 2 *', task: { message: 'x' } }, 'never fires'],
    ['a nickname', { cron: '@hourly', task: { message: 'x' } }, '5 fields'],
    ['no task', { cron: '0 * * * *' }, 'task'],
    ['a blank message', { cron: '0 * * * *', task: { message: ' ' } }, 'task: message'],
    ['an unknown overlap', { cron: '0 * * * *', task: { message: 'x' }, overlap: 'queue' }, 'overlap'],
    ['an unknown field', { cron: '0 * * * *', task: { message: 'x' }, every: 5 }, 'every'],
  ])('refuses %s with 400 VALIDATION_ERROR, saying why', async (_case, body, message) => {
    const res = await create(body);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ success: false, error: { code: 'VALIDATION_ERROR', message: expect.stringContaining(message) } });
  });

  it('refuses a PATCH to a cron or timezone the create would refuse', async () => {
    const { body } = await create({ cron: '0 0 1 1 *', task: { message: 'x' } });
    const id = body.data.id;
    expect((await h.api(`/api/v1/schedules/${id}`, { method: 'PATCH', json: { cron: 'nope' } })).status).toBe(400);
    expect((await h.api(`/api/v1/schedules/${id}`, { method: 'PATCH', json: { timezone: 'Nowhere/Land' } })).status).toBe(400);
    const changed = await h.api(`/api/v1/schedules/${id}`, {
      method: 'PATCH',
      json: { cron: '30 9 * * MON-FRI', timezone: 'Europe/Paris', overlap: 'enqueue' },
    });
    expect(changed.body.data).toMatchObject({ cron: '30 9 * * MON-FRI', timezone: 'Europe/Paris', overlap: 'enqueue' });
    await remove(id);
  });

  it('holds a tenant to MAX_SCHEDULES_PER_TENANT, counting deleted ones out, other tenants apart', async () => {
    const ids: string[] = [];
    for (;;) {
      const res = await create({ cron: '0 0 1 1 *', task: { message: 'x' } });
      if (res.status !== 201) {
        expect(res.status).toBe(409);
        expect(res.body.error).toMatchObject({ code: 'CONFLICT', message: expect.stringContaining('MAX_SCHEDULES_PER_TENANT') });
        break;
      }
      ids.push(res.body.data.id);
      expect(ids.length).toBeLessThanOrEqual(6);
    }
    expect((await create({ cron: '0 0 1 1 *', task: { message: 'x' } }, OTHER_API_KEY)).status).toBe(201);
    const page = await h.api('/api/v1/schedules?limit=2');
    expect(page.body.data.schedules).toHaveLength(2);
    const next = await h.api(`/api/v1/schedules?limit=2&cursor=${page.body.data.nextCursor}`);
    expect(next.body.data.schedules[0].id).not.toBe(page.body.data.schedules[0].id);
    await remove(ids[0]);
    expect((await create({ cron: '0 0 1 1 *', task: { message: 'x' } })).status).toBe(201);
  });
});
