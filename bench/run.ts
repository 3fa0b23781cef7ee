import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { benchApproveLatency } from './approve-latency';
import { benchCheckpoints, benchFork } from './checkpoints';
import { benchCreateLatency } from './create-latency';
import { benchEgress } from './egress';
import { benchFootprint } from './footprint';
import { benchInterruptLatency } from './interrupt-latency';
import { InProcessService } from './lib/in-process-service';
import { machineFacts } from './lib/machine';
import { benchMovedBounds } from './moved-bounds';
import type { BenchResults } from './lib/report';
import { renderReport } from './lib/report';
import { benchReplay } from './replay';
import { benchSandbox } from './sandbox';
import { benchScheduleCost } from './schedules';
import { benchSseFanout } from './sse-fanout';
import { benchCompiledSseFanout } from './sse-fanout-compiled';
import { benchStepOverhead } from './step-overhead';
import { benchWebhookAppendCost } from './webhook-append-cost';
import { benchWebhookBacklog } from './webhook-backlog';
import { benchWebhookLatency } from './webhook-latency';

// `npm run bench`: the benchmarks of BENCHMARKS.md, one after the other, then a Markdown
// table on stdout and in .bench/latest.md. Exit code 0, or 1 when a measurement failed.
//
// Environment: BENCH_RATE (create rate, default 500), BENCH_DURATION_S (measured seconds, 10),
// BENCH_ONLY (comma list of create,sse,sse-compiled,replay,sandbox,approve,bounds,webhook,webhook-append,webhook-backlog,footprint,step,egress,checkpoints,fork,schedules,interrupt), BENCH_CPU_PROF (directory: profile the children of
// benchmarks 1, 8, 8c, 9 and 10 with --cpu-prof, and this process over benchmark 11's proxied downloads), BENCH_PACED=0 (skip the evenly paced supplementary run),
// BENCH_CHILD_ENV (JSON object of extra variables for the child of benchmarks 1 and 8, for comparison runs),
// BENCH_WEBHOOK_WARMUP (tasks in benchmark 8's warm-up round, 10), BENCH_WEBHOOK_WARMUP_ROUNDS (its warm-up rounds, 1),
// BENCH_WEBHOOK_BACKLOG (messages pending in benchmark 8c, 2000), BENCH_WEBHOOK_SAMPLES (a file: benchmark 8's samples appended as a JSON line per run, for bench/pooled-percentiles.ts).

const ROOT = join(__dirname, '..');
const WATCHDOG_MS = 20 * 60_000;

/** BENCH_CHILD_ENV: extra variables for the child service of benchmarks 1 and 8 (comparison runs). */
function childEnvFromBench(): Record<string, string> | undefined {
  return process.env.BENCH_CHILD_ENV ? (JSON.parse(process.env.BENCH_CHILD_ENV) as Record<string, string>) : undefined;
}

function envNumber(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number, got "${raw}"`);
  return value;
}

const log = (line: string): void => void process.stderr.write(`[bench] ${line}\n`);

async function main(): Promise<number> {
  const rate = envNumber('BENCH_RATE', 500);
  const durationS = envNumber('BENCH_DURATION_S', 10);
  const only = (
    process.env.BENCH_ONLY ??
    'create,sse,sse-compiled,replay,sandbox,approve,bounds,webhook,webhook-append,webhook-backlog,footprint,step,egress,checkpoints,fork,schedules,interrupt'
  )
    .split(',')
    .map((s) => s.trim());
  const results: BenchResults = { startedAt: new Date().toISOString(), machine: machineFacts(), failures: {}, skipped: [] };
  const mutable = results as { -readonly [K in keyof BenchResults]: BenchResults[K] };

  if (only.includes('create')) {
    try {
      mutable.create = await benchCreateLatency({
        rate,
        durationS,
        warmupS: 2,
        connections: 50,
        paced: process.env.BENCH_PACED !== '0',
        cpuProfDir: process.env.BENCH_CPU_PROF || undefined,
        extraEnv: childEnvFromBench(),
        log,
      });
    } catch (error) {
      results.failures['1. create'] = describe(error);
    }
  } else results.skipped.push('1. create');

  const inProcess = ['sse', 'replay', 'approve', 'fork', 'interrupt'].some((name) => only.includes(name));
  if (inProcess) {
    let service: InProcessService | undefined;
    try {
      log('starting the in-process service');
      service = await InProcessService.start();
      if (only.includes('sse')) {
        try {
          mutable.sse = await benchSseFanout(service, { subscribers: 100, appends: 500, intervalMs: 10, log });
          if (!mutable.sse.exactlyOnce) results.failures['2. append → SSE'] = 'not every client received every event exactly once';
        } catch (error) {
          results.failures['2. append → SSE'] = describe(error);
        }
      } else results.skipped.push('2. append → SSE');
      if (only.includes('replay')) {
        try {
          mutable.replay = await benchReplay(service, { events: 10_000, runs: 5, log });
          if (!mutable.replay.complete) results.failures['3. replay'] = 'a replay was incomplete or out of order';
        } catch (error) {
          results.failures['3. replay'] = describe(error);
        }
      } else results.skipped.push('3. replay');
      if (only.includes('approve')) {
        try {
          mutable.approve = await benchApproveLatency(service, { runs: 100, warmupRuns: 5, log });
          if (mutable.approve.failures > 0)
            results.failures['6. approve → tool_result'] =
              `${mutable.approve.failures} of ${mutable.approve.runs} runs got no tool_result: ${mutable.approve.failureReasons[0] ?? ''}`;
        } catch (error) {
          results.failures['6. approve → tool_result'] = describe(error);
        }
      } else results.skipped.push('6. approve → tool_result');
      if (only.includes('fork')) {
        try {
          mutable.fork = await benchFork(service, { events: 1000, runs: 20, log });
        } catch (error) {
          results.failures['12c. fork'] = describe(error);
        }
      } else results.skipped.push('12c. fork');
      if (only.includes('interrupt')) {
        try {
          mutable.interrupt = await benchInterruptLatency(service, { runs: 50, warmupRuns: 5, log });
        } catch (error) {
          results.failures['13. interrupt → next turn'] = describe(error);
        }
      } else results.skipped.push('13. interrupt → next turn');
    } catch (error) {
      results.failures['in-process service'] = describe(error);
    } finally {
      await service?.close();
    }
  } else results.skipped.push('2. append → SSE', '3. replay', '6. approve → tool_result', '12c. fork', '13. interrupt → next turn');

  if (only.includes('checkpoints')) {
    try {
      mutable.checkpoints = await benchCheckpoints({ log });
    } catch (error) {
      results.failures['12. checkpoints'] = describe(error);
    }
  } else results.skipped.push('12. checkpoints');

  if (only.includes('schedules')) {
    try {
      mutable.schedules = await benchScheduleCost({ schedules: 1000, log });
      const runs = mutable.schedules.runsPerScheduleSample;
      if (runs.some((n) => n !== runs[0]))
        results.failures['14. schedules'] = `schedules recorded different numbers of runs: ${runs.join(', ')}`;
    } catch (error) {
      results.failures['14. schedules'] = describe(error);
    }
  } else results.skipped.push('14. schedules');

  if (only.includes('sse-compiled')) {
    try {
      mutable.sseCompiled = await benchCompiledSseFanout({ subscribers: 100, followUps: 500, intervalMs: 10, log });
      const s = mutable.sseCompiled;
      if (s.missing > 0 || s.duplicates > 0)
        results.failures['2b. POST → SSE, compiled'] = `${s.missing} deliveries missing, ${s.duplicates} repeated`;
    } catch (error) {
      results.failures['2b. POST → SSE, compiled'] = describe(error);
    }
  } else results.skipped.push('2b. POST → SSE, compiled');

  if (only.includes('sandbox')) {
    try {
      mutable.sandbox = await benchSandbox({ runs: 50, creates: 30, workspaceMb: 100, log });
      if (!mutable.sandbox.restoredIntact) results.failures['5. snapshot + restore'] = 'the restored workspace is not the snapshotted one';
    } catch (error) {
      results.failures['4./5. sandbox'] = describe(error);
    }
  } else results.skipped.push('4. sandbox start', '4b. workspace creation', '5. snapshot + restore');

  if (only.includes('bounds')) {
    try {
      mutable.bounds = await benchMovedBounds({ log });
    } catch (error) {
      results.failures['7. bounds moved from tests'] = describe(error);
    }
  } else results.skipped.push('7. bounds moved from tests');

  if (only.includes('webhook')) {
    try {
      mutable.webhook = await benchWebhookLatency({
        tasks: 100,
        warmupTasks: envNumber('BENCH_WEBHOOK_WARMUP', 10),
        warmupRounds: envNumber('BENCH_WEBHOOK_WARMUP_ROUNDS', 1),
        cpuProfDir: process.env.BENCH_CPU_PROF || undefined,
        log,
        extraEnv: childEnvFromBench(),
      });
      const w = mutable.webhook;
      if (w.received !== w.tasks || w.duplicates > 0)
        results.failures['8. webhooks'] = `${w.received} of ${w.tasks} task.completed messages received, ${w.duplicates} repeated`;
    } catch (error) {
      results.failures['8. webhooks'] = describe(error);
    }
  } else results.skipped.push('8. webhooks');

  if (only.includes('webhook-append')) {
    try {
      mutable.webhookAppend = await benchWebhookAppendCost({
        loads: [
          { writers: 1, appends: 500 },
          { writers: 20, appends: 2_000 },
        ],
        log,
      });
    } catch (error) {
      results.failures['8b. webhook dispatcher cost per append'] = describe(error);
    }
  } else results.skipped.push('8b. webhook dispatcher cost per append');

  if (only.includes('webhook-backlog')) {
    try {
      mutable.webhookBacklog = await benchWebhookBacklog({
        messages: envNumber('BENCH_WEBHOOK_BACKLOG', 2_000),
        cpuProfDir: process.env.BENCH_CPU_PROF || undefined,
        log,
      });
    } catch (error) {
      results.failures['8c. webhook retries with a backlog'] = describe(error);
    }
  } else results.skipped.push('8c. webhook retries with a backlog');

  if (only.includes('footprint')) {
    try {
      mutable.footprint = await benchFootprint({
        concurrency: 20,
        tasksPerBatch: 5_000,
        batches: 2,
        idleAfterStartS: 10,
        idleAfterBatchS: 5,
        cpuProfDir: process.env.BENCH_CPU_PROF || undefined,
        log,
      });
    } catch (error) {
      results.failures['9. footprint (issue 19)'] = describe(error);
    }
  } else results.skipped.push('9. footprint (issue 19)');

  if (only.includes('step')) {
    try {
      mutable.step = await benchStepOverhead({
        tasks: 20,
        stepsPerTask: 10,
        warmupTasks: 2,
        cpuProfDir: process.env.BENCH_CPU_PROF || undefined,
        log,
      });
    } catch (error) {
      results.failures['10. agent overhead per step'] = describe(error);
    }
  } else results.skipped.push('10. agent overhead per step');

  if (only.includes('egress')) {
    try {
      mutable.egress = await benchEgress({
        payloadMiB: 100,
        runs: 5,
        commandStarts: 15,
        connections: 100,
        cpuProfDir: process.env.BENCH_CPU_PROF || undefined,
        log,
      });
      if (mutable.egress.incomplete.length > 0) results.failures['11. egress proxy'] = mutable.egress.incomplete.join('; ');
    } catch (error) {
      results.failures['11. egress proxy'] = describe(error);
    }
  } else results.skipped.push('11. egress proxy');

  const report = renderReport(results);
  process.stdout.write(`\n${report}\n`);
  await mkdir(join(ROOT, '.bench'), { recursive: true });
  await writeFile(join(ROOT, '.bench', 'latest.md'), report);
  await writeFile(join(ROOT, '.bench', 'latest.json'), JSON.stringify(results, null, 2));
  log('written .bench/latest.md and .bench/latest.json');
  return Object.keys(results.failures).length > 0 ? 1 : 0;
}

function describe(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  log(`FAILED: ${error instanceof Error && error.stack ? error.stack : message}`);
  return message.split('\n')[0].slice(0, 300);
}

// Ctrl-C: exit normally so the 'exit' hook kills a running child service (registered before the
// in-process app's own shutdown hooks, so it runs first).
process.once('SIGINT', () => process.exit(130));

const watchdog = setTimeout(() => {
  log(`watchdog: the bench did not finish within ${WATCHDOG_MS / 60_000} minutes`);
  process.exit(1);
}, WATCHDOG_MS);
watchdog.unref();

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    log(`FAILED: ${error instanceof Error ? error.stack : String(error)}`);
    process.exit(1);
  },
);
