import { readFile, writeFile } from 'node:fs/promises';
import { Client as TemporalClient, Connection } from '@temporalio/client';
import { join } from 'node:path';
import type { ChatCompletionsBody, ScriptedOpenAiServer } from '@app/model-provider/testing/scripted-openai-server';
import { startScriptedOpenAiServer } from '@app/model-provider/testing/scripted-openai-server';
import type { BalancedStream } from '../support/balanced-sse-client';
import { followBalanced } from '../support/balanced-sse-client';
import type { DistributedDeployment, ServiceInstance } from '../support/distributed-deployment';
import { startDistributedDeployment } from '../support/distributed-deployment';
import { orchestratorRunningStep, pollDeployment, readHistory } from '../support/distributed-reads';
import { workspaceOf } from '../support/workspaces';

// docs/operations/deployment.md "Shutdown and rolling restarts": SIGTERM drains a process within SHUTDOWN_TIMEOUT_MS and exits 0, so a
// rolling restart of every service, one process at a time, loses nothing. Tasks keep running
// (new ones start all along), each followed by an SSE client that goes through a balancer to
// whichever API instance is up and resumes with Last-Event-ID when its stream is ended.

jest.setTimeout(240_000);

const KEY = 'rolling-restart-key';
const SHUTDOWN_TIMEOUT_MS = 8_000;
/** Tool calls per task, each a model call then a command. */
const STEPS = 3;
const MODEL_DELAY_MS = 400;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The model of every task: STEPS commands, one after another, then a final answer. */
function agentReply(body: ChatCompletionsBody) {
  const done = (body.messages ?? []).filter((m) => m.role === 'tool').length;
  if (done >= STEPS) return { text: `All ${STEPS} steps done.`, delayMs: MODEL_DELAY_MS };
  const command = `sleep 0.3; echo step-${done + 1} >> runs.log; echo step-${done + 1}`;
  return { toolCalls: [{ name: 'shell', arguments: { command } }], delayMs: MODEL_DELAY_MS };
}

describe('A rolling restart (SIGTERM to each process in turn) while tasks run (distributed mode)', () => {
  let model: ScriptedOpenAiServer;
  let d: DistributedDeployment;

  beforeAll(async () => {
    model = await startScriptedOpenAiServer({ defaultReply: agentReply });
    d = await startDistributedDeployment(
      { api: 2, orchestrator: 2, sandbox: 1, artifacts: 1 },
      {
        API_KEYS: KEY,
        LLM_BASE_URL: model.url,
        LLM_MODEL: 'scripted',
        LLM_MAX_RETRIES: '0',
        SHUTDOWN_TIMEOUT_MS: String(SHUTDOWN_TIMEOUT_MS),
      },
    );
  });
  afterAll(async () => {
    // Every instance's log, for a failure's post-mortem: ATS_DIST_LOG=/tmp/dist-services.log
    if (process.env.ATS_DIST_LOG && d) await writeFile(process.env.ATS_DIST_LOG, d.output());
    await d?.close();
    await model?.close();
  });

  it('completes every task, and every SSE client sees every event of its task exactly once, in order', async () => {
    const apis = d.instances.filter((i) => i.service === 'api');
    const stopping = new Set<ServiceInstance>();
    /** What the balancer routes to: the API instances not being restarted. */
    const upstreams = () => apis.filter((i) => !stopping.has(i)).map((i) => d.apiUrls[i.index]);
    const tasks: Array<{ id: string; stream: BalancedStream }> = [];
    const startTask = async (n: number) => {
      const [url] = upstreams();
      const res = await fetch(`${url}/api/v1/tasks`, {
        method: 'POST',
        headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify({ message: `rolling task ${n}` }),
      });
      expect(res.status).toBe(201);
      const id = ((await res.json()) as { data: { id: string } }).data.id;
      tasks.push({ id, stream: followBalanced(upstreams, KEY, id, { timeoutMs: 180_000 }) });
    };

    // Tasks start all through the restarts, so every process is stopped with work under way.
    let restarting = true;
    const producer = (async () => {
      for (let n = 0; restarting; n++) {
        await startTask(n);
        await sleep(1_500);
      }
    })();

    const exits: Array<{ instance: string; code: number | null; signal: string | null; ms: number }> = [];
    /** The stopped processes' own logs: a restart replaces the instance's process and its output. */
    const stoppedLogs: string[] = [];
    const order: Array<ServiceInstance['service']> = ['api', 'orchestrator', 'sandbox', 'artifacts'];
    await sleep(2_000);
    for (const service of order) {
      for (const instance of d.instances.filter((i) => i.service === service)) {
        stopping.add(instance);
        exits.push({ instance: `${service}#${instance.index}`, ...(await instance.process.terminate()) });
        stoppedLogs.push(`--- stopped ${service}#${instance.index}\n${instance.process.output()}`);
        await d.restart(instance);
        stopping.delete(instance);
        await sleep(1_000);
      }
    }
    restarting = false;
    await producer;

    if (process.env.ATS_DIST_LOG) await writeFile(`${process.env.ATS_DIST_LOG}.stopped`, stoppedLogs.join('\n'));
    // Each process drained and exited 0 within its bound, and said so.
    for (const log of stoppedLogs) expect(log).toMatch(/SIGTERM: shutting down[\s\S]*shut down in \d+ ms/);
    // Work was under way in the workers stopped: an orchestrator stopped with steps running.
    const busy = stoppedLogs.filter((log) => /stopping with \d+ (step|tool call)/.test(log)).map((log) => log.split('\n')[0]);
    expect(busy.some((name) => name.includes('orchestrator'))).toBe(true);
    for (const exit of exits) {
      expect(exit).toMatchObject({ code: 0, signal: null });
      expect(exit.ms).toBeLessThan(SHUTDOWN_TIMEOUT_MS);
    }
    expect(exits).toHaveLength(6);

    for (const { id, stream } of tasks) {
      const seen = await stream.events;
      const history = await readHistory(d.apiUrls[0], KEY, id);
      // A task that did not complete: its history says why, for the failure's post-mortem.
      if (history.at(-1)?.event !== 'done' || (history.at(-1)?.data as { status?: string }).status !== 'completed') {
        process.stdout.write(`task ${id} did not complete:\n${history.map((e) => JSON.stringify(e)).join('\n')}\n`);
      }
      // Exactly the stored history, in order, none twice: ids 1..n and the same kinds and payloads.
      expect(seen.map((e) => e.id)).toEqual(history.map((_, i) => i + 1));
      expect(seen.map(({ id: eventId, kind, data }) => ({ id: eventId, event: kind, data }))).toEqual(history);
      expect(history.at(-1)).toMatchObject({ event: 'done', data: { status: 'completed' } });
      expect(history.filter((e) => e.event === 'tool_result').map((e) => e.data.status)).toEqual(Array(STEPS).fill('success'));
      // Every command ran exactly once, whichever process was stopped while it ran.
      const runs = await readFile(join(workspaceOf(d.sandboxVolume, id), 'runs.log'), 'utf8');
      expect(runs).toBe(Array.from({ length: STEPS }, (_, i) => `step-${i + 1}\n`).join(''));
    }
    // The API restarts ended streams that were open: their clients came back with Last-Event-ID.
    const resumed = tasks.flatMap((t) => t.stream.connects.filter((c) => c.lastEventId !== undefined));
    expect(resumed.length).toBeGreaterThan(0);
    process.stdout.write(
      `rolling restart: ${tasks.length} tasks, ${resumed.length} stream resumes, stopped busy: ${busy.join(', ')}; exits ${exits.map((e) => `${e.instance} ${e.ms} ms`).join(', ')}\n`,
    );
  });

  it('hands a step that outlasts the grace time back to another worker: exit 0 in time, nothing lost or run twice', async () => {
    // SHUTDOWN_TIMEOUT_MS 8 s leaves a step 5 s to finish. This one's model call is held past
    // that, so the stopping worker must cancel it and Temporal retry it on the other worker.
    const connection = await Connection.connect({ address: d.sharedEnv.TEMPORAL_ADDRESS });
    try {
      const temporal = new TemporalClient({ connection, namespace: d.sharedEnv.TEMPORAL_NAMESPACE || 'default' });
      let held = false;
      let release!: () => void;
      const released = new Promise<void>((resolve) => (release = resolve));
      model.script(
        { toolCalls: [{ name: 'shell', arguments: { command: 'echo ran >> once.log; echo ran' } }] },
        async () => {
          held = true;
          await released;
          return { text: 'never delivered: its worker handed the step back' };
        },
        { text: 'Finished on the other worker.' },
      );
      const requestsBefore = model.requests.length;
      const res = await fetch(`${d.apiUrls[0]}/api/v1/tasks`, {
        method: 'POST',
        headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify({ message: 'outlast the grace time' }),
      });
      const id = ((await res.json()) as { data: { id: string } }).data.id;
      await pollDeployment(d, 'the held model call', async () => (held ? true : undefined));
      const victim = (await orchestratorRunningStep(d, temporal, id))!;
      expect(victim).toBeDefined();

      const exit = await victim.process.terminate();
      release();
      expect(exit).toMatchObject({ code: 0, signal: null });
      // It waited out the grace time (the step did not finish), then left well inside the bound.
      expect(exit.ms).toBeGreaterThanOrEqual(SHUTDOWN_TIMEOUT_MS - 3_000);
      expect(exit.ms).toBeLessThan(SHUTDOWN_TIMEOUT_MS);
      const exitedAt = Date.now();
      const history = await readHistory(d.apiUrls[0], KEY, id);
      // Handed back, the step is retried at once: a killed worker's waits out the 10 s heartbeat timeout.
      const completedAfterMs = Date.now() - exitedAt;
      expect(completedAfterMs).toBeLessThan(5_000);
      process.stdout.write(`handed back: worker exited 0 after ${exit.ms} ms, task completed ${completedAfterMs} ms later\n`);
      expect(history.map((e) => e.id)).toEqual(history.map((_, i) => i + 1));
      expect(history.map((e) => e.event)).toEqual([
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
      expect(history.at(-1)!.data.status).toBe('completed');
      expect(history.find((e) => e.event === 'content')!.data.text).toBe('Finished on the other worker.');
      expect(await readFile(join(workspaceOf(d.sandboxVolume, id), 'once.log'), 'utf8')).toBe('ran\n');
      const requests = model.requests.slice(requestsBefore);
      expect(requests).toHaveLength(3);
      expect(requests[2].messages).toEqual(requests[1].messages);
      await d.restart(victim);
    } finally {
      await connection.close();
    }
  });

  it('stops a command that outlasts the grace time on a sandbox shutting down: exit 0 in time, the task goes on', async () => {
    model.script(
      { toolCalls: [{ name: 'shell', arguments: { command: 'echo started > long.log; sleep 60; echo finished >> long.log' } }] },
      { text: 'The command was stopped; carrying on.' },
    );
    const res = await fetch(`${d.apiUrls[0]}/api/v1/tasks`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ message: 'run something long' }),
    });
    const id = ((await res.json()) as { data: { id: string } }).data.id;
    const log = join(workspaceOf(d.sandboxVolume, id), 'long.log');
    await pollDeployment(d, 'the long command to start', async () => ((await readFile(log, 'utf8').catch(() => '')) ? true : undefined));
    const sandbox = d.instances.find((i) => i.service === 'sandbox')!;

    const exiting = sandbox.process.terminate();
    // While it drains, its /readyz tells a balancer to send it nothing.
    const drainingStatus = await pollDeployment(d, 'the draining sandbox to answer /readyz 503', async () => {
      const res = await fetch(`${sandbox.healthUrl}/readyz`).catch(() => undefined);
      return res?.status === 503 ? ((await res.json()) as { dependencies: Record<string, string> }) : undefined;
    });
    expect(drainingStatus.dependencies).toMatchObject({ shutdown: 'down' });
    const exit = await exiting;
    expect(exit).toMatchObject({ code: 0, signal: null });
    expect(exit.ms).toBeGreaterThanOrEqual(SHUTDOWN_TIMEOUT_MS - 3_000);
    expect(exit.ms).toBeLessThan(SHUTDOWN_TIMEOUT_MS);
    expect(sandbox.process.output()).toMatch(/stopping 1 tool call\(s\) still running after 5000 ms/);
    await d.restart(sandbox);

    const history = await readHistory(d.apiUrls[0], KEY, id);
    expect(history.map((e) => e.id)).toEqual(history.map((_, i) => i + 1));
    const results = history.filter((e) => e.event === 'tool_result');
    expect(results).toHaveLength(1);
    expect(results[0].data.status).not.toBe('success');
    expect(history.at(-1)).toMatchObject({ event: 'done', data: { status: 'completed' } });
    expect(await readFile(log, 'utf8')).toBe('started\n');
    process.stdout.write(`sandbox stopped a long command: exited 0 after ${exit.ms} ms; tool_result ${JSON.stringify(results[0].data)}\n`);
  });
});
