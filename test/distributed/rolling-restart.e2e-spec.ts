import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ChatCompletionsBody, ScriptedOpenAiServer, startScriptedOpenAiServer } from '@app/model-provider/testing/scripted-openai-server';
import { BalancedStream, followBalanced } from '../support/balanced-sse-client';
import { DistributedDeployment, ServiceInstance, startDistributedDeployment } from '../support/distributed-deployment';
import { readHistory } from '../support/distributed-reads';

// README "Operating it": SIGTERM drains a process within SHUTDOWN_TIMEOUT_MS and exits 0, so a
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
        const child = instance.process.child;
        const startedAt = Date.now();
        const exited = new Promise<[number | null, string | null]>((resolve) =>
          child.once('exit', (code, signal) => resolve([code, signal])),
        );
        child.kill('SIGTERM');
        const [code, signal] = await exited;
        exits.push({ instance: `${service}#${instance.index}`, code, signal, ms: Date.now() - startedAt });
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
      // Exactly the stored history, in order, none twice: ids 1..n and the same kinds and payloads.
      expect(seen.map((e) => e.id)).toEqual(history.map((_, i) => i + 1));
      expect(seen.map(({ id: eventId, kind, data }) => ({ id: eventId, event: kind, data }))).toEqual(history);
      expect(history.at(-1)).toMatchObject({ event: 'done', data: { status: 'completed' } });
      expect(history.filter((e) => e.event === 'tool_result').map((e) => e.data.status)).toEqual(Array(STEPS).fill('success'));
      // Every command ran exactly once, whichever process was stopped while it ran.
      const runs = await readFile(join(d.sandboxVolume, 'workspaces', id, 'runs.log'), 'utf8');
      expect(runs).toBe(Array.from({ length: STEPS }, (_, i) => `step-${i + 1}\n`).join(''));
    }
    // The API restarts ended streams that were open: their clients came back with Last-Event-ID.
    const resumed = tasks.flatMap((t) => t.stream.connects.filter((c) => c.lastEventId !== undefined));
    expect(resumed.length).toBeGreaterThan(0);
    process.stdout.write(
      `rolling restart: ${tasks.length} tasks, ${resumed.length} stream resumes, stopped busy: ${busy.join(', ')}; exits ${exits.map((e) => `${e.instance} ${e.ms} ms`).join(', ')}\n`,
    );
  });
});
