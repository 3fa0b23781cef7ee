import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { ScriptedOpenAiServer } from '@app/model-provider/testing/scripted-openai-server';
import { startScriptedOpenAiServer } from '@app/model-provider/testing/scripted-openai-server';
import type { DistributedDeployment } from '../test/support/distributed-deployment';
import { startDistributedDeployment } from '../test/support/distributed-deployment';
import type { MachineFacts } from './lib/machine';
import { machineFacts } from './lib/machine';
import { readStreamEvents } from './lib/read-stream-events';
import { SseRecorder } from './lib/sse-recorder';
import type { Summary } from './lib/stats';
import { summarize } from './lib/stats';
import { sleep, waitUntil, withTimeout } from './lib/timing';

// The distributed-mode benchmarks (`npm run bench:distributed`, which starts the servers first):
// two API instances, two orchestrator workers, two sandbox instances and one artifacts instance,
// each its own process, over PostgreSQL, NATS, Temporal and MinIO on this machine. Everything is
// measured from outside, over HTTP and SSE, as a client sees it. Writes .bench/distributed.md.

const KEY = 'bench-key';
const SUBSCRIBERS = Number(process.env.BENCH_SUBSCRIBERS ?? 100);
const FOLLOW_UPS = Number(process.env.BENCH_FOLLOW_UPS ?? 200);
const FOLLOW_UP_EVERY_MS = 20;
const APPROVE_RUNS = Number(process.env.BENCH_APPROVE_RUNS ?? 50);
const STEP_TASKS = Number(process.env.BENCH_STEP_TASKS ?? 10);
const STEPS_PER_TASK = 10;
const WAIT_MS = 30_000;
const WATCHDOG_MS = 15 * 60_000;

interface Figures {
  readonly delivery: Summary;
  readonly approve: Summary;
  readonly stepWall: Summary;
  readonly stepOverhead: Summary;
}

async function main(): Promise<void> {
  const watchdog = setTimeout(() => {
    console.error(`bench:distributed: watchdog: still running after ${WATCHDOG_MS / 60_000} min`);
    process.exit(1);
  }, WATCHDOG_MS);
  const machine = machineFacts(); // before the deployment loads the machine
  const model = await startScriptedOpenAiServer();
  let d: DistributedDeployment | undefined;
  try {
    log('starting the deployment: 2 api, 2 orchestrator, 2 sandbox, 1 artifacts');
    d = await startDistributedDeployment(
      { api: 2, orchestrator: 2, sandbox: 2, artifacts: 1 },
      {
        API_KEYS: KEY,
        LLM_BASE_URL: model.url,
        LLM_MODEL: 'scripted',
        LLM_STREAM: 'false',
        LLM_TIMEOUT_MS: '3600000',
        SSE_KEEPALIVE_MS: '15000',
      },
    );
    const figures: Figures = {
      delivery: await benchDelivery(d, model),
      approve: await benchApprove(d, model),
      ...(await benchSteps(d, model)),
    };
    const report = render(figures, machine);
    console.log(report);
    await mkdir('.bench', { recursive: true });
    await writeFile(join('.bench', 'distributed.md'), report);
  } finally {
    await d?.close();
    await model.close();
    clearTimeout(watchdog);
  }
}

/**
 * Follow-up POSTed to API instance 0 → its `message` event received by each of SUBSCRIBERS SSE
 * clients, half on each API instance. The model never answers, so the turn stays running and each
 * follow-up appends exactly one event; the other instance learns of it from the store's notification.
 */
async function benchDelivery(d: DistributedDeployment, model: ScriptedOpenAiServer): Promise<Summary> {
  model.script({ hang: true });
  const id = await createTask(d.apiUrls[0], { message: 'stay running' });
  await waitUntil('the turn to start', async () => (await getTask(d.apiUrls[0], id)).status === 'running', WAIT_MS);
  const base = (await getTask(d.apiUrls[0], id)).lastEventId;
  const clients = Array.from(
    { length: SUBSCRIBERS },
    (_, i) => new SseRecorder(`${d.apiUrls[i % 2]}/api/v1/tasks/${id}/stream?after=${base}`, auth()),
  );
  log(`delivery: ${SUBSCRIBERS} subscribers over both API instances, ${FOLLOW_UPS} follow-ups every ${FOLLOW_UP_EVERY_MS} ms`);
  try {
    await Promise.all(clients.map((c) => c.open()));
    const sentAt: number[] = [];
    for (let k = 1; k <= FOLLOW_UPS; k++) {
      const next = performance.now() + FOLLOW_UP_EVERY_MS;
      sentAt[k] = performance.now();
      await post(d.apiUrls[0], `/api/v1/tasks/${id}/messages`, { message: `follow-up ${k}` });
      await sleep(Math.max(0, next - performance.now()));
    }
    await Promise.all(clients.map((c) => c.waitFor(base + FOLLOW_UPS, WAIT_MS)));
    const samples: number[] = [];
    for (const c of clients) {
      if (c.duplicates.length > 0) throw new Error(`a subscriber received ids twice: ${c.duplicates.slice(0, 5).join(', ')}`);
      for (let k = 1; k <= FOLLOW_UPS; k++) {
        const at = c.receivedAt.get(base + k);
        if (at === undefined) throw new Error(`a subscriber missed id ${base + k}`);
        samples.push(at - sentAt[k]);
      }
    }
    return summarize(samples);
  } finally {
    clients.forEach((c) => c.close());
    await post(d.apiUrls[0], `/api/v1/tasks/${id}/cancel`, {}).catch(() => undefined);
    // Let anything the cancel sets off settle, so it cannot take the next benchmark's model replies.
    await waitUntil(
      'the task to stop',
      async () => !['pending', 'running'].includes((await getTask(d.apiUrls[0], id)).status),
      WAIT_MS,
    ).catch(() => undefined);
    await sleep(1_000);
  }
}

/** POST approve on API instance 0 → the call's `tool_result` on an SSE client of instance 1. */
async function benchApprove(d: DistributedDeployment, model: ScriptedOpenAiServer): Promise<Summary> {
  log(`approve: 3 warm-up + ${APPROVE_RUNS} measured runs (list_files, autoExecute false)`);
  const samples: number[] = [];
  for (let run = 0; run < APPROVE_RUNS + 3; run++) {
    model.script({ toolCalls: [{ name: 'list_files', arguments: {} }] }, { text: 'listed' });
    const id = await createTask(d.apiUrls[0], { message: 'list', autoExecute: false });
    let callId = '';
    await waitUntil(
      'the call to await approval',
      async () => ((callId = (await getTask(d.apiUrls[1], id)).pendingApprovals[0]?.callId ?? ''), callId !== ''),
      WAIT_MS,
    );
    const pendingAt = (await getTask(d.apiUrls[1], id)).lastEventId;
    const client = new SseRecorder(`${d.apiUrls[1]}/api/v1/tasks/${id}/stream?after=${pendingAt}`, auth());
    try {
      await client.open();
      const t0 = performance.now();
      await post(d.apiUrls[0], `/api/v1/tasks/${id}/tools/${callId}/approve`, { outcome: 'proceed_once' });
      const toolResultId = pendingAt + 3; // tool_decision, tool_started, tool_result
      await client.waitFor(toolResultId, WAIT_MS);
      if (run >= 3) samples.push(client.receivedAt.get(toolResultId)! - t0);
      await waitUntil('the turn to end', async () => (await getTask(d.apiUrls[0], id)).status === 'completed', WAIT_MS);
    } finally {
      client.close();
    }
  }
  return summarize(samples);
}

/**
 * Agent overhead per step: tasks of STEPS_PER_TASK steps (model asks for list_files, the tool runs)
 * and a closing answer, the model answering at once. Per step = turn wall time / model calls;
 * overhead subtracts the tools' own durationMs and the model server's time in the request.
 */
async function benchSteps(d: DistributedDeployment, model: ScriptedOpenAiServer): Promise<{ stepWall: Summary; stepOverhead: Summary }> {
  log(`steps: ${STEP_TASKS} tasks of ${STEPS_PER_TASK} tool steps each`);
  const wall: number[] = [];
  const overhead: number[] = [];
  for (let t = 0; t < STEP_TASKS + 1; t++) {
    const calls = Array.from({ length: STEPS_PER_TASK }, () => ({ toolCalls: [{ name: 'list_files', arguments: {} }] }));
    model.script(...calls, { text: 'done' });
    const id = await createTask(d.apiUrls[0], { message: 'loop' });
    const client = new SseRecorder(`${d.apiUrls[1]}/api/v1/tasks/${id}/stream?after=0`, auth());
    try {
      await client.open();
      await waitUntil('the turn to end', async () => (await getTask(d.apiUrls[0], id)).status === 'completed', WAIT_MS * 2);
      const events = await readStreamEvents(d.apiUrls[1], id, auth(), WAIT_MS);
      const started = client.receivedAt.get(events.find((e) => e.event === 'status')!.id)!;
      const done = client.receivedAt.get(events.find((e) => e.event === 'done')!.id)!;
      const toolMs = events.filter((e) => e.event === 'tool_result').reduce((n, e) => n + Number(e.data.durationMs ?? 0), 0);
      const steps = STEPS_PER_TASK + 1;
      if (t > 0) {
        wall.push((done - started) / steps);
        overhead.push((done - started - toolMs) / steps);
      }
    } finally {
      client.close();
    }
  }
  return { stepWall: summarize(wall), stepOverhead: summarize(overhead) };
}

function render(f: Figures, m: MachineFacts): string {
  const row = (name: string, s: Summary, target: string) =>
    `| ${name} | ${s.count} | ${fmt(s.p50)} | ${fmt(s.p90)} | ${fmt(s.p99)} | ${fmt(s.max)} | ${target} |`;
  return [
    `## Distributed mode (${new Date().toISOString().slice(0, 10)}; ${m.cpu}, ${m.cores} cores, load ${m.loadAtStart} at start, ${m.code})`,
    '',
    '| measurement | samples | p50 ms | p90 ms | p99 ms | max ms | target |',
    '|---|---|---|---|---|---|---|',
    row(`follow-up POST → event on ${SUBSCRIBERS} SSE clients (both API instances)`, f.delivery, 'p99 ≤ 25'),
    row('POST approve (instance 0) → tool_result on SSE (instance 1)', f.approve, '≤ 100'),
    row('turn wall time per step (model call + list_files)', f.stepWall, '–'),
    row('agent overhead per step (wall − tool durationMs)', f.stepOverhead, '≤ 30'),
    '',
  ].join('\n');
}

const fmt = (n: number) => (Number.isFinite(n) ? n.toFixed(1) : 'n/a');
const log = (line: string) => console.error(`[bench:distributed] ${line}`);
const auth = () => ({ authorization: `Bearer ${KEY}` });

async function post(base: string, path: string, json: unknown): Promise<any> {
  const res = await withTimeout(
    `POST ${path}`,
    fetch(`${base}${path}`, { method: 'POST', headers: { ...auth(), 'content-type': 'application/json' }, body: JSON.stringify(json) }),
    WAIT_MS,
  );
  const text = await res.text();
  if (!res.ok) throw new Error(`POST ${path}: HTTP ${res.status} ${text.slice(0, 300)}`);
  return JSON.parse(text).data;
}

async function getTask(base: string, id: string): Promise<{ status: string; lastEventId: number; pendingApprovals: { callId: string }[] }> {
  const res = await withTimeout(`GET task`, fetch(`${base}/api/v1/tasks/${id}`, { headers: auth() }), WAIT_MS);
  if (!res.ok) throw new Error(`GET task ${id}: HTTP ${res.status}`);
  return ((await res.json()) as { data: { status: string; lastEventId: number; pendingApprovals: { callId: string }[] } }).data;
}

async function createTask(base: string, body: Record<string, unknown>): Promise<string> {
  return (await post(base, '/api/v1/tasks', body)).id;
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(`bench:distributed failed: ${error instanceof Error ? error.stack : String(error)}`);
    process.exit(1);
  },
);
