import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ScriptedOpenAiServer } from '@app/model-provider/testing/scripted-openai-server';
import { startScriptedOpenAiServer } from '@app/model-provider/testing/scripted-openai-server';
import type { ServiceProcess } from '../../../test/support/service-process';
import { freePort, startServiceProcess } from '../../../test/support/service-process';

jest.setTimeout(120_000);

// Schedules across crashes of the all-in-one process (docs/api.md "Schedules"): every due time
// fires once and none twice however the process is killed, and a due time missed while it was
// down fires at start if younger than SCHEDULE_CATCHUP_MS, else is recorded skipped.

interface Run {
  dueAt: string;
  firedAt?: string;
  taskId?: string;
  outcome: 'started' | 'skipped' | 'failed';
  reason?: string;
}

const KEY = 'schedule-restart-key';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function call(service: ServiceProcess, path: string, method = 'GET', json?: unknown): Promise<any> {
  const response = await fetch(`${service.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${KEY}`, ...(json === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(json === undefined ? {} : { body: JSON.stringify(json) }),
  });
  const body = (await response.json()) as any;
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(body)}`);
  return body.data;
}

/** Every run, oldest first, read 3 at a time: the pages' cursors are part of what is checked. */
async function allRuns(service: ServiceProcess, id: string): Promise<Run[]> {
  const runs: Run[] = [];
  let cursor: string | null = null;
  do {
    const page: { runs: Run[]; nextCursor: string | null } = await call(
      service,
      `/api/v1/schedules/${id}/runs?limit=3${cursor ? `&cursor=${cursor}` : ''}`,
    );
    runs.push(...page.runs);
    cursor = page.nextCursor;
  } while (cursor);
  return runs.reverse(); // oldest first
}

/** Every whole second from the first due time to the last, each exactly once. */
function expectEverySecondOnce(runs: readonly Run[]): void {
  const times = runs.map((r) => new Date(r.dueAt).getTime());
  for (let i = 1; i < times.length; i++) expect(times[i] - times[i - 1]).toBe(1000);
}

describe('Schedules across kill -9 and restart of the all-in-one service', () => {
  let dataDir: string;
  let model: ScriptedOpenAiServer;
  let service: ServiceProcess | undefined;
  beforeEach(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'ats-schedule-restart-'));
    model = await startScriptedOpenAiServer();
  });
  afterEach(async () => {
    await service?.stop();
    service = undefined;
    await model.close();
    await rm(dataDir, { recursive: true, force: true });
  });
  const envOf = (extra: Record<string, string>) => ({
    DATA_DIR: dataDir,
    API_KEYS: KEY,
    LLM_BASE_URL: model.url,
    LLM_MODEL: 'scripted',
    SCHEDULE_MIN_INTERVAL_MS: '1000',
    ...extra,
  });

  it('fires every due time once and none twice across three kill -9s, each run one task with its scheduleId', async () => {
    const env = envOf({});
    const port = await freePort();
    service = await startServiceProcess(env, port);
    const { id } = await call(service, '/api/v1/schedules', 'POST', { cron: '* * * * * *', task: { message: 'tick' }, overlap: 'enqueue' });
    for (const aliveMs of [2300, 1700, 2900]) {
      await sleep(aliveMs);
      await service.kill9();
      service = await startServiceProcess(env, port);
    }
    await sleep(2500);
    await call(service, `/api/v1/schedules/${id}`, 'PATCH', { paused: true });
    const runs = await allRuns(service, id);
    expect(runs.length).toBeGreaterThanOrEqual(8);
    expectEverySecondOnce(runs);
    // Down for a few seconds, far under SCHEDULE_CATCHUP_MS: every due time in between fired at start.
    expect(runs.map((r) => r.outcome)).toEqual(runs.map(() => 'started'));
    const taskIds = runs.map((r) => r.taskId);
    expect(new Set(taskIds).size).toBe(runs.length);
    const tasks: { id: string; scheduleId: string | null }[] = (await call(service, '/api/v1/tasks?limit=100')).tasks;
    const scheduled = tasks.filter((t) => t.scheduleId === id).map((t) => t.id);
    expect(scheduled.sort()).toEqual([...taskIds].sort());
  });

  it('fires a due time missed while down if younger than SCHEDULE_CATCHUP_MS, and records older ones skipped', async () => {
    const catchupMs = 8000;
    const env = envOf({ SCHEDULE_CATCHUP_MS: String(catchupMs) });
    const port = await freePort();
    service = await startServiceProcess(env, port);
    const { id } = await call(service, '/api/v1/schedules', 'POST', { cron: '* * * * * *', task: { message: 'tick' }, overlap: 'enqueue' });
    await sleep(1500);
    await service.kill9();
    const downAt = Date.now();
    await sleep(12_000);
    const startAt = Date.now();
    service = await startServiceProcess(env, port);
    const upAt = Date.now();
    await sleep(1500);
    await call(service, `/api/v1/schedules/${id}`, 'PATCH', { paused: true });
    const runs = await allRuns(service, id);
    expectEverySecondOnce(runs);
    // Each due time of the stop, judged by its age when the restarted firer reached it: fired if
    // under SCHEDULE_CATCHUP_MS, else recorded skipped with its age.
    const missed = runs.filter((r) => new Date(r.dueAt).getTime() > downAt && new Date(r.dueAt).getTime() < startAt);
    for (const run of missed) {
      const age = run.outcome === 'started' ? new Date(run.firedAt!).getTime() - new Date(run.dueAt).getTime() : undefined;
      if (age !== undefined) expect(age).toBeLessThanOrEqual(catchupMs);
      else {
        expect(run).toMatchObject({ outcome: 'skipped', reason: expect.stringContaining('SCHEDULE_CATCHUP_MS') });
        expect(Number(/was (\d+) ms old/.exec(run.reason!)![1])).toBeGreaterThan(catchupMs);
      }
    }
    const outcomes = missed.map((r) => r.outcome);
    // Down 12 s: the oldest are too old; the youngest are not, unless the start-up itself (slow
    // on a loaded machine) took nearly SCHEDULE_CATCHUP_MS.
    expect(outcomes.filter((o) => o === 'skipped').length).toBeGreaterThanOrEqual(2);
    if (upAt - startAt < catchupMs - 1000) expect(outcomes).toContain('started');
    // Skipped ones precede started ones: the older a due time, the likelier it is too old.
    expect(
      runs
        .filter((r) => new Date(r.dueAt).getTime() > downAt)
        .map((r) => r.outcome)
        .join(','),
    ).toMatch(/^(skipped,)+(started,?)+$/);
  });
});
