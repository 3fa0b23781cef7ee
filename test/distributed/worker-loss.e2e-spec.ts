import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Client as TemporalClient, Connection } from '@temporalio/client';
import { tsToMs } from '@temporalio/common';
import type { ScriptedOpenAiServer } from '@app/model-provider/testing/scripted-openai-server';
import { startScriptedOpenAiServer } from '@app/model-provider/testing/scripted-openai-server';
import type { DistributedDeployment } from '../support/distributed-deployment';
import { startDistributedDeployment } from '../support/distributed-deployment';
import type { StreamBlock as Block } from '../support/distributed-reads';
import { orchestratorOfWorker, orchestratorRunningStep, pollDeployment, readHistory } from '../support/distributed-reads';
import { workspaceOf } from '../support/workspaces';

// What docs/operations/deployment.md promises when an orchestrator worker dies (kill -9) in the distributed mode:
// the step it was running is retried on another worker, and a call waiting for approval still
// expires APPROVAL_TIMEOUT_MS after it was requested, not that long after the workers came back.

jest.setTimeout(180_000);

const KEY = 'worker-loss-key';
const headers = { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const APPROVAL_TIMEOUT_MS = 20_000;

describe('Orchestrator workers killed mid-task (distributed mode)', () => {
  let model: ScriptedOpenAiServer;
  let d: DistributedDeployment;
  let temporalConnection: Connection;
  let temporal: TemporalClient;

  beforeAll(async () => {
    model = await startScriptedOpenAiServer();
    d = await startDistributedDeployment(
      { api: 1, orchestrator: 2, sandbox: 1, artifacts: 0 },
      {
        API_KEYS: KEY,
        LLM_BASE_URL: model.url,
        LLM_MODEL: 'scripted',
        LLM_MAX_RETRIES: '0',
        APPROVAL_TIMEOUT_MS: String(APPROVAL_TIMEOUT_MS),
      },
    );
    temporalConnection = await Connection.connect({ address: d.sharedEnv.TEMPORAL_ADDRESS });
    temporal = new TemporalClient({ connection: temporalConnection, namespace: d.sharedEnv.TEMPORAL_NAMESPACE || 'default' });
  });
  afterAll(async () => {
    // Every instance's log, for a failure's post-mortem: ATS_DIST_LOG=/tmp/dist-services.log
    if (process.env.ATS_DIST_LOG && d) await writeFile(process.env.ATS_DIST_LOG, d.output());
    await temporalConnection?.close();
    await d?.close();
    await model?.close();
  });

  const api = async (path: string, init: { method?: string; json?: unknown } = {}) => {
    const res = await fetch(`${d.apiUrls[0]}${path}`, {
      method: init.method ?? 'GET',
      headers,
      body: init.json === undefined ? undefined : JSON.stringify(init.json),
    });
    return { status: res.status, body: (await res.json()) as any };
  };
  const view = async (id: string) => (await api(`/api/v1/tasks/${id}`)).body.data;
  const until = <T>(what: string, probe: () => Promise<T | undefined>, timeoutMs?: number) => pollDeployment(d, what, probe, timeoutMs);
  /** The task's whole history, read once the stream ends with `done`. */
  const history = (id: string) => readHistory(d.apiUrls[0], KEY, id);
  const expectGapless = (blocks: Block[]) => expect(blocks.map((b) => b.id)).toEqual(blocks.map((_, i) => i + 1));
  const orchestrators = () => d.instances.filter((i) => i.service === 'orchestrator');
  const workerOf = (identity: string) => orchestratorOfWorker(d, identity);

  it('retries the step of a killed worker on the other one: the task completes, no event lost or recorded twice', async () => {
    // Model call, command, model call: the second model call is held until the worker running it
    // is dead, so that worker surely dies with a step in flight (Temporal says which worker it is).
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let held = false;
    model.script(
      { toolCalls: [{ name: 'shell', arguments: { command: 'echo ran >> runs.log; echo ran' } }] },
      async () => {
        held = true;
        await released;
        return { text: 'never delivered: its worker is dead' };
      },
      { text: 'Finished on the other worker.' },
    );
    const requestsBefore = model.requests.length;
    const id = (await api('/api/v1/tasks', { method: 'POST', json: { message: 'survive a worker' } })).body.data.id as string;
    await until('the second model call to arrive', async () => (held ? true : undefined));

    const workflow = temporal.workflow.getHandle(`agent-${id}-turn-1`);
    const victim = (await orchestratorRunningStep(d, temporal, id))!;
    expect(victim).toBeDefined();
    const survivor = orchestrators().find((i) => i !== victim)!;
    await victim.process.kill9();
    release();

    const blocks = await history(id);
    expectGapless(blocks);
    expect(blocks.map((b) => b.event)).toEqual([
      'message',
      'status',
      'usage',
      'tool_call',
      'tool_started',
      'tool_result',
      'usage',
      'content',
      'done',
    ]);
    expect(blocks.find((b) => b.event === 'tool_result')!.data).toMatchObject({ status: 'success', output: 'ran\n' });
    expect(blocks.find((b) => b.event === 'content')!.data.text).toBe('Finished on the other worker.');
    expect(blocks.at(-1)!.data.status).toBe('completed');
    // The command ran once: the retried step resumed after the last recorded step, the lost model call.
    expect(await readFile(join(workspaceOf(d.sandboxVolume, id), 'runs.log'), 'utf8')).toBe('ran\n');
    const requests = model.requests.slice(requestsBefore);
    expect(requests).toHaveLength(3);
    expect(requests[2].messages).toEqual(requests[1].messages);

    // Temporal's own record: the step's last attempt, the second, ran on the surviving worker.
    await workflow.result();
    const started = (await workflow.fetchHistory()).events!.flatMap((e) =>
      e.activityTaskStartedEventAttributes ? [e.activityTaskStartedEventAttributes] : [],
    );
    expect(started.map((s) => ({ attempt: s.attempt, worker: workerOf(s.identity!)?.index }))).toContainEqual({
      attempt: 2,
      worker: survivor.index,
    });
  });

  it('expires a call awaiting approval APPROVAL_TIMEOUT_MS after its request though every worker was killed meanwhile', async () => {
    // Slack for a loaded machine (timer, workflow task, step, projection); a reset timer fires half a timeout late or more.
    const toleranceMs = 6_000;
    model.script(
      { toolCalls: [{ name: 'write_file', arguments: { path: 'downloads/never.md', content: 'x' } }] },
      { text: 'Nobody answered.' },
    );
    const id = (await api('/api/v1/tasks', { method: 'POST', json: { message: 'wait for a decision nobody makes', autoExecute: false } }))
      .body.data.id as string;
    const pending = await until('a pending approval', async () => ((await view(id)).pendingApprovals as any[])[0]);
    const requestedAt = Date.parse(pending.requestedAt);
    await sleep(requestedAt + APPROVAL_TIMEOUT_MS / 2 - Date.now());
    // Every worker that could hold a timer in memory dies (one may be dead already, from above);
    // one comes back. The durable Temporal timer and the request's recorded time must carry it.
    await Promise.all(orchestrators().map((i) => i.process.kill9()));
    const restarted = orchestrators()[0];
    await d.restart(restarted);
    await until('the call to expire', async () => ((await view(id)).pendingApprovals.length === 0 ? true : undefined), 60_000);
    const expiredAt = Date.now();
    // When the new worker first took the turn up: Temporal hands it over only once the dead worker's
    // sticky queue times out (up to 10 s after the restart), so the restart itself is no yardstick.
    const workflowEvents = (await temporal.workflow.getHandle(`agent-${id}-turn-1`).fetchHistory()).events!;
    const takenUp = workflowEvents.find((e) => workerOf(e.workflowTaskStartedEventAttributes?.identity ?? '') === restarted)!;
    const takenUpAt = tsToMs(takenUp.eventTime);
    // Kept: it expires at request + timeout, or as soon as the new worker has the turn when that
    // moment passed while no worker had it. Reset: the new worker would wait a whole timeout more.
    expect(expiredAt - requestedAt).toBeGreaterThanOrEqual(APPROVAL_TIMEOUT_MS);
    expect(expiredAt).toBeLessThan(Math.max(requestedAt + APPROVAL_TIMEOUT_MS, takenUpAt) + toleranceMs);

    const blocks = await history(id);
    expectGapless(blocks);
    expect(blocks.filter((b) => b.event === 'tool_decision').map((b) => b.data)).toEqual([
      { callId: pending.callId, outcome: 'expired', approved: false, timeoutMs: APPROVAL_TIMEOUT_MS },
    ]);
    expect(blocks.find((b) => b.event === 'tool_result')!.data).toMatchObject({ callId: pending.callId, status: 'cancelled' });
    expect(blocks.filter((b) => b.event === 'tool_started')).toHaveLength(0);
    expect(blocks.at(-1)!.data.status).toBe('completed');
  });
});
