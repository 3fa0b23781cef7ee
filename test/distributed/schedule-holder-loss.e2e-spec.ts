import { writeFile } from 'node:fs/promises';
import { Client as TemporalClient, Connection } from '@temporalio/client';
import type { ScriptedOpenAiServer } from '@app/model-provider/testing/scripted-openai-server';
import { SCHEDULE_SHARDS, scheduleClockWorkflowId, scheduleShardOf } from '@app/workflows';
import { startScriptedOpenAiServer } from '@app/model-provider/testing/scripted-openai-server';
import type { DistributedDeployment, ServiceInstance } from '../support/distributed-deployment';
import { startDistributedDeployment } from '../support/distributed-deployment';

// What docs/api.md "Schedules" promises in the distributed mode: a schedule is woken by its
// shard's Temporal clock workflow, whose worker runs in every API process. Killing (kill -9) the
// API process that holds it (the worker that ran the shard's last workflow task, whose cache and
// sticky queue have it) moves it to another API process within seconds: every due time fires once, none twice, and what fell due
// meanwhile fires late rather than never.

jest.setTimeout(240_000);

const KEY = 'schedule-holder-key';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Run {
  dueAt: string;
  firedAt?: string;
  taskId?: string;
  outcome: 'started' | 'skipped' | 'failed';
}

describe('Schedules when the API process holding one is killed (distributed mode)', () => {
  let model: ScriptedOpenAiServer;
  let d: DistributedDeployment;
  let temporalConnection: Connection;
  let temporal: TemporalClient;
  /** API instances killed and not restarted: requests go to the others. */
  const down = new Set<ServiceInstance>();

  beforeAll(async () => {
    model = await startScriptedOpenAiServer();
    d = await startDistributedDeployment(
      { api: 2, orchestrator: 1, sandbox: 1, artifacts: 0 },
      { API_KEYS: KEY, LLM_BASE_URL: model.url, LLM_MODEL: 'scripted', SCHEDULE_MIN_INTERVAL_MS: '1000' },
    );
    temporalConnection = await Connection.connect({ address: d.sharedEnv.TEMPORAL_ADDRESS });
    temporal = new TemporalClient({ connection: temporalConnection, namespace: d.sharedEnv.TEMPORAL_NAMESPACE || 'default' });
  });
  afterAll(async () => {
    if (process.env.ATS_DIST_LOG && d) await writeFile(process.env.ATS_DIST_LOG, d.output());
    await temporalConnection?.close();
    await d?.close();
    await model?.close();
  });

  const apis = () => d.instances.filter((i) => i.service === 'api');
  const call = async (path: string, method = 'GET', json?: unknown): Promise<any> => {
    const live = apis().find((i) => !down.has(i))!;
    const response = await fetch(`${live.healthUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${KEY}`, ...(json === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(json === undefined ? {} : { body: JSON.stringify(json) }),
    });
    const body = (await response.json()) as any;
    if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(body)}`);
    return body.data;
  };
  const allRuns = async (id: string): Promise<Run[]> => {
    const runs: Run[] = [];
    let cursor: string | null = null;
    do {
      const page: { runs: Run[]; nextCursor: string | null } = await call(
        `/api/v1/schedules/${id}/runs?limit=100${cursor ? `&cursor=${cursor}` : ''}`,
      );
      runs.push(...page.runs);
      cursor = page.nextCursor;
    } while (cursor);
    return runs.reverse();
  };
  /** The API process whose worker completed the last workflow task of the schedule's shard's clock: it holds the schedule. */
  const holder = async (scheduleId: string): Promise<ServiceInstance> => {
    const shard = scheduleShardOf(scheduleId, SCHEDULE_SHARDS);
    const history = await temporal.workflow
      .getHandle(scheduleClockWorkflowId(`${d.sharedEnv.TEMPORAL_TASK_QUEUE}-schedules`, shard))
      .fetchHistory();
    const completed = (history.events ?? []).filter((e) => e.workflowTaskCompletedEventAttributes);
    const identity = completed.at(-1)!.workflowTaskCompletedEventAttributes!.identity!;
    const instance = apis().find((i) => identity.startsWith(`${i.process.child.pid}@`));
    if (!instance) throw new Error(`no API process has the worker identity ${identity}`);
    return instance;
  };
  const firedSince = async (id: string, at: number) => (await allRuns(id)).filter((r) => new Date(r.dueAt).getTime() > at).length;

  it('fires every due time once and none twice across kill -9 of the holding API process, twice', async () => {
    const { id } = await call('/api/v1/schedules', 'POST', { cron: '* * * * * *', task: { message: 'tick' }, overlap: 'enqueue' });
    await sleep(3000);
    const killedAt: number[] = [];
    for (let round = 0; round < 2; round++) {
      const victim = await holder(id);
      await victim.process.kill9();
      down.add(victim);
      killedAt.push(Date.now());
      // The survivor's worker takes the schedule over: due times after the kill keep firing.
      const deadline = Date.now() + 30_000;
      while ((await firedSince(id, killedAt[round] + 2000)) < 2) {
        if (Date.now() > deadline) throw new Error(`no due time fired in the 30 s after the holder was killed\n${d.output().slice(-4000)}`);
        await sleep(500);
      }
      // The other process now holds it. The runs above may come from the retry of the look the
      // victim held (a catch-up firing several due times in one call), recorded before the
      // survivor completes the shard's next workflow task: wait for that task too.
      while ((await holder(id)) === victim) {
        if (Date.now() > deadline) throw new Error(`the shard's workflow tasks still ran on the killed process 30 s after the kill`);
        await sleep(500);
      }
      // The killed one comes back for the next round.
      await d.restart(victim);
      down.delete(victim);
    }
    await sleep(2000);
    await call(`/api/v1/schedules/${id}`, 'PATCH', { paused: true });

    const runs = await allRuns(id);
    const times = runs.map((r) => new Date(r.dueAt).getTime());
    // Every whole second from the first due time to the last, each exactly once.
    for (let i = 1; i < times.length; i++) expect(times[i] - times[i - 1]).toBe(1000);
    expect(runs.length).toBeGreaterThanOrEqual(10);
    // Far under SCHEDULE_CATCHUP_MS: the due times of each takeover fired late, none skipped.
    expect(runs.map((r) => r.outcome)).toEqual(runs.map(() => 'started'));
    const taskIds = runs.map((r) => r.taskId);
    expect(new Set(taskIds).size).toBe(runs.length);
    const tasks: { id: string; scheduleId: string | null }[] = (await call('/api/v1/tasks?limit=100')).tasks;
    expect(
      tasks
        .filter((t) => t.scheduleId === id)
        .map((t) => t.id)
        .sort(),
    ).toEqual([...taskIds].sort());
  });
});
