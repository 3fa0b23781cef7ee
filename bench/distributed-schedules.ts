import { execFileSync } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startScriptedOpenAiServer } from '@app/model-provider/testing/scripted-openai-server';
import type { DistributedDeployment } from '../test/support/distributed-deployment';
import { startDistributedDeployment } from '../test/support/distributed-deployment';
import { machineFacts } from './lib/machine';
import type { Summary } from './lib/stats';
import { summarize } from './lib/stats';
import { cpuMs } from './lib/proc-cpu';
import { nextMinute, sleep, waitUntil } from './lib/timing';

// Benchmark 14 in the distributed mode (`npm run bench:distributed -- schedules`, which starts the
// servers first): what 1,000 schedules firing every minute cost between firings, when the clock is
// Temporal's (a clock workflow per shard of the schedules) and the API runs as two processes.
// Every schedule targets one task whose turn never ends, with overlap `skip`: each due time is
// woken, looked at and recorded (`skipped`, the previous run still running) through the same path
// as a run that starts, without starting a thousand agent turns a minute, which is the agent
// runner's throughput on this machine's Temporal dev server, not the clock's. Each process's CPU
// is measured with no schedule at all first, so what the schedules cost is the difference.
// `BENCH_SCHEDULE_RUNS=1` has each due time start a task of its own instead (a turn of the
// scripted model each), to see what the agent runner makes of a thousand turns a minute.
// Writes .bench/distributed-schedules.md.

const KEY = 'bench-schedules-key';
const SCHEDULES = Number(process.env.BENCH_SCHEDULES ?? 1000);
/** Each due time starts a task (a turn), instead of being recorded skipped against the running target. */
const RUNS = process.env.BENCH_SCHEDULE_RUNS === '1';
/** Firings measured, each with the stretch after it. */
const FIRINGS = Number(process.env.BENCH_SCHEDULE_FIRINGS ?? 2);
/** A firing's CPU is counted over this long from its due time; the stretch between firings starts after it. */
const FIRING_WINDOW_MS = 20_000;
const WATCHDOG_MS = 20 * 60_000;

interface Process {
  readonly name: string;
  readonly pid: number;
}

async function main(): Promise<void> {
  const watchdog = setTimeout(() => {
    console.error(`bench:distributed schedules: watchdog: still running after ${WATCHDOG_MS / 60_000} min`);
    process.exit(1);
  }, WATCHDOG_MS);
  const machine = machineFacts();
  const model = await startScriptedOpenAiServer();
  let d: DistributedDeployment | undefined;
  try {
    log('starting the deployment: 2 api, 1 orchestrator, 1 sandbox, 1 artifacts');
    d = await startDistributedDeployment(
      { api: 2, orchestrator: 1, sandbox: 1, artifacts: 1 },
      {
        API_KEYS: KEY,
        LLM_BASE_URL: model.url,
        LLM_MODEL: 'scripted',
        LLM_STREAM: 'false',
        LLM_TIMEOUT_MS: '3600000',
        MAX_SCHEDULES_PER_TENANT: String(SCHEDULES),
      },
    );
    const api = d.apiUrls[0];
    const call = async (method: string, path: string, json?: unknown) => {
      const response = await fetch(`${api}${path}`, {
        method,
        headers: { authorization: `Bearer ${KEY}`, ...(json ? { 'content-type': 'application/json' } : {}) },
        ...(json ? { body: JSON.stringify(json) } : {}),
      });
      const body = (await response.json()) as { data: any };
      if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(body)}`);
      return body.data;
    };
    const processes: Process[] = [
      ...d.instances.map((i) => ({ name: `${i.service}-${i.index}`, pid: i.process.child.pid! })),
      { name: 'temporal dev server', pid: temporalServerPid() },
    ];

    model.script({ hang: true });
    const target = (await call('POST', '/api/v1/tasks', { message: 'stay running' })).id as string;
    await waitUntil('the target to run', async () => (await call('GET', `/api/v1/tasks/${target}`)).status === 'running', 30_000);
    // Past the start's own work (compiling, the shards' first rescans), which is not an idle cost.
    await sleep(30_000);
    // What the deployment costs with no schedule at all: its workers polling, its heartbeats.
    const baseline = await cpuWindow(processes, 30_000);
    log(`no schedules: ${describeWindow(baseline)}`);

    const createdFrom = Date.now();
    const ids: string[] = [];
    for (let i = 0; i < SCHEDULES; i += 20) {
      const batch = await Promise.all(
        Array.from({ length: Math.min(20, SCHEDULES - i) }, (_, k) =>
          call('POST', '/api/v1/schedules', {
            cron: '* * * * *',
            ...(RUNS ? {} : { target, overlap: 'skip' }),
            task: { message: `tick ${i + k}`, ...(RUNS ? { showInHistory: false } : {}) },
          }),
        ),
      );
      ids.push(...batch.map((s: { id: string }) => s.id));
    }
    log(`${ids.length} schedules created in ${((Date.now() - createdFrom) / 1000).toFixed(1)} s`);

    // FIRINGS firings of every schedule, each followed by the stretch up to a second before the next due time.
    const firstDue = nextMinute(Date.now() + 5000);
    const firings: Firing[] = [];
    // How late each due time was recorded (the schedule's lastRunAt − the due time), over a sample.
    const sample = ids.filter((_, i) => i % Math.ceil(ids.length / 20) === 0);
    const lateness: number[] = [];
    const betweens: Window[] = [];
    const firingTimes = Array.from({ length: FIRINGS + 1 }, (_, i) => firstDue + i * 60_000);
    for (const due of firingTimes.slice(0, FIRINGS)) {
      await sleep(due - Date.now());
      firings.push(await firingFrom(due, processes));
      for (const id of sample) {
        const lastRunAt = (await call('GET', `/api/v1/schedules/${id}`)).lastRunAt as string | null;
        // Not recorded yet (lastRunAt still the last minute's): counted as late as can be.
        lateness.push(lastRunAt === null || Date.parse(lastRunAt) < due ? Infinity : Date.parse(lastRunAt) - due);
      }
      log(
        `firing at ${new Date(due).toISOString().slice(11, 16)}: CPU over ${FIRING_WINDOW_MS / 1000} s ${describeCpu(firings.at(-1)!.cpuS)}`,
      );
      betweens.push(await cpuWindow(processes, due + 59_000 - Date.now()));
      log(`between firings: ${describeWindow(betweens.at(-1)!)}`);
    }

    // Every due time so far, the last one's included, recorded once by each schedule of a sample
    // (given a minute: with a run each, the runner may still be catching up).
    const missing = async (id: string): Promise<number[]> => {
      const runs = (await call('GET', `/api/v1/schedules/${id}/runs?limit=100`)).runs as { dueAt: string }[];
      const recorded = runs.map((r) => new Date(r.dueAt).getTime());
      if (new Set(recorded).size !== recorded.length) throw new Error(`schedule ${id} recorded a due time twice`);
      return firingTimes.filter((due) => !recorded.includes(due));
    };
    const lastDue = firingTimes.at(-1)!;
    for (const id of sample) {
      let left = await missing(id);
      while (left.length > 0 && Date.now() < lastDue + 60_000) {
        await sleep(1000);
        left = await missing(id);
      }
      if (left.length > 0) throw new Error(`schedule ${id} did not record ${left.map((t) => new Date(t).toISOString()).join(', ')}`);
    }
    const late = summarize(lateness);
    log(
      `each of a sample of ${sample.length} schedules recorded each of the ${FIRINGS + 1} due times once, late by p50 ${late.p50.toFixed(0)} ms, max ${late.max.toFixed(0)} ms`,
    );
    if (RUNS) {
      const statuses: Record<string, number> = {};
      for (const id of sample) {
        for (const run of (await call('GET', `/api/v1/schedules/${id}/runs?limit=100`)).runs as { taskId?: string }[]) {
          const status = run.taskId ? ((await call('GET', `/api/v1/tasks/${run.taskId}`)).status as string) : 'none';
          statuses[status] = (statuses[status] ?? 0) + 1;
        }
      }
      log(`the sample's runs' tasks: ${JSON.stringify(statuses)}`);
    }

    const report = render({
      machine: `${machine.cores} × ${machine.cpu}, ${machine.memoryGiB} GiB, Node ${machine.node}, load at start ${machine.loadAtStart}, code ${machine.code}`,
      baseline,
      betweens,
      firings,
      late,
      schedules: ids.length,
    });
    console.log(report);
    await mkdir('.bench', { recursive: true });
    await writeFile(join('.bench', 'distributed-schedules.md'), report);
  } finally {
    await d?.close();
    await model.close();
    clearTimeout(watchdog);
  }
}

interface Window {
  readonly seconds: number;
  /** % of one core over the window, by process name. */
  readonly percent: Readonly<Record<string, number>>;
  /** Ours: the services' processes, without the Temporal server. */
  readonly oursPercent: number;
}

interface Firing {
  readonly cpuS: Readonly<Record<string, number>>;
}

async function cpuWindow(processes: readonly Process[], ms: number): Promise<Window> {
  const from = await cpuOf(processes);
  const startedAt = Date.now();
  await sleep(Math.max(ms, 0));
  const to = await cpuOf(processes);
  const seconds = (Date.now() - startedAt) / 1000;
  const percent: Record<string, number> = {};
  for (const p of processes) percent[p.name] = ((to.get(p.pid) ?? 0) - (from.get(p.pid) ?? 0)) / 10 / seconds;
  const oursPercent = processes.filter((p) => !p.name.startsWith('temporal')).reduce((total, p) => total + percent[p.name], 0);
  return { seconds, percent, oursPercent };
}

/** The CPU of the stretch from the due time to FIRING_WINDOW_MS after it, where the firing's work falls. */
async function firingFrom(due: number, processes: readonly Process[]): Promise<Firing> {
  const from = await cpuOf(processes);
  await sleep(due + FIRING_WINDOW_MS - Date.now());
  const to = await cpuOf(processes);
  const cpuS: Record<string, number> = {};
  for (const p of processes) cpuS[p.name] = ((to.get(p.pid) ?? 0) - (from.get(p.pid) ?? 0)) / 1000;
  return { cpuS };
}

const describeCpu = (cpuS: Readonly<Record<string, number>>): string =>
  Object.entries(cpuS)
    .map(([name, s]) => `${name} ${s.toFixed(1)} s`)
    .join(', ');

const describeWindow = (w: Window): string =>
  `${w.seconds.toFixed(1)} s, ours ${w.oursPercent.toFixed(2)} % of a core (${Object.entries(w.percent)
    .map(([name, p]) => `${name} ${p.toFixed(2)} %`)
    .join(', ')})`;

function render(r: {
  machine: string;
  baseline: Window;
  betweens: readonly Window[];
  firings: readonly Firing[];
  late: Summary;
  schedules: number;
}): string {
  const cells = (name: string) =>
    [r.baseline.percent[name], ...r.betweens.map((w) => w.percent[name])].map((p) => p.toFixed(2)).join(' | ') +
    ' | ' +
    r.firings.map((f) => f.cpuS[name].toFixed(1)).join(' | ');
  return [
    `# Benchmark 14, distributed: ${r.schedules} schedules firing every minute`,
    '',
    r.machine,
    '',
    RUNS
      ? `Each due time of every schedule starts a task, a turn of the scripted model: woken by its shard's Temporal clock, recorded and started.`
      : `Every schedule targets one running task with overlap \`skip\`: each due time is woken by its shard's Temporal clock and recorded \`skipped\`.`,
    `A sample of 20 schedules recorded each due time once, late (recorded − due) by p50 ${r.late.p50.toFixed(0)} ms, p99 ${r.late.p99.toFixed(0)} ms, max ${r.late.max.toFixed(0)} ms.`,
    `A firing's CPU is counted over the ${FIRING_WINDOW_MS / 1000} s from its due time; the stretch after a firing runs from then to a second before the next due time.`,
    '',
    `| process | no schedules, % of a core | ${r.betweens.map((_, i) => `after firing ${i + 1}, %`).join(' | ')} | ${r.firings.map((_, i) => `firing ${i + 1}, CPU s`).join(' | ')} |`,
    `|---|---|${r.betweens.map(() => '---|').join('')}${r.firings.map(() => '---|').join('')}`,
    ...Object.keys(r.baseline.percent).map((name) => `| ${name} | ${cells(name)} |`),
    `| **ours (without Temporal)** | **${r.baseline.oursPercent.toFixed(2)}** | ${r.betweens.map((w) => `**${w.oursPercent.toFixed(2)}**`).join(' | ')} | ${r.firings.map(() => ' ').join(' | ')} |`,
    '',
  ].join('\n');
}

async function cpuOf(processes: readonly Process[]): Promise<Map<number, number>> {
  return new Map(await Promise.all(processes.map(async (p) => [p.pid, await cpuMs(p.pid)] as const)));
}

/** The Temporal dev server's process (infra/dev/ensure-temporal.sh starts it). */
function temporalServerPid(): number {
  const pids = execFileSync('pgrep', ['-f', 'server start-dev']).toString().trim().split('\n');
  return Number(pids[0]);
}

function log(line: string): void {
  console.error(`[${new Date().toISOString().slice(11, 19)}] ${line}`);
}

void main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
