import type { Row } from './report-row';
import type { ApproveLatencyFigures } from '../approve-latency';
import type { SandboxFigures } from '../sandbox';
import type { ScheduleCostFigures } from '../schedules';
import type { MovedBoundsFigures } from '../moved-bounds';
import { MOVED_BOUND_TARGETS } from '../moved-bounds';
import type { CreateLatencyFigures } from '../create-latency';
import type { CheckpointFigures, ForkFigures } from '../checkpoints';
import type { InterruptLatencyFigures } from '../interrupt-latency';
import type { Summary } from './stats';
import type { EgressFigures } from '../egress';
import type { FootprintFigures, MemorySample } from '../footprint';
import type { ReplayFigures } from '../replay';
import type { SseFanoutFigures } from '../sse-fanout';
import type { CompiledSseFanoutFigures } from '../sse-fanout-compiled';
import type { StepOverheadFigures } from '../step-overhead';
import type { AppendCostFigures } from '../webhook-append-cost';
import type { WebhookBacklogFigures } from '../webhook-backlog';
import type { WebhookLatencyFigures } from '../webhook-latency';
import { egressRows } from './egress-rows';
import type { MachineFacts } from './machine';

export interface BenchResults {
  readonly startedAt: string;
  readonly machine: MachineFacts;
  readonly create?: CreateLatencyFigures;
  readonly sse?: SseFanoutFigures;
  readonly sseCompiled?: CompiledSseFanoutFigures;
  readonly replay?: ReplayFigures;
  readonly sandbox?: SandboxFigures;
  readonly approve?: ApproveLatencyFigures;
  readonly bounds?: MovedBoundsFigures;
  readonly webhook?: WebhookLatencyFigures;
  readonly webhookAppend?: AppendCostFigures;
  readonly webhookBacklog?: WebhookBacklogFigures;
  readonly footprint?: FootprintFigures;
  readonly step?: StepOverheadFigures;
  readonly egress?: EgressFigures;
  readonly checkpoints?: CheckpointFigures;
  readonly fork?: ForkFigures;
  readonly schedules?: ScheduleCostFigures;
  readonly interrupt?: InterruptLatencyFigures;
  /** Benchmark name → error message, for the ones that failed. */
  readonly failures: Record<string, string>;
  readonly skipped: string[];
}

export type { Row } from './report-row';

const ms = (n: number): string => (Number.isFinite(n) ? `${n.toFixed(2)} ms` : 'n/a');
const met = (ok: boolean): string => (ok ? 'yes' : '**no**');

/** The Markdown report: machine facts and one table of every figure. */
export function renderReport(r: BenchResults): string {
  const rows: Row[] = [];
  if (r.create) {
    const c = r.create;
    const name = `1. create, ${c.rate} req/s, ${c.durationS} s, ${c.connections} conns (autocannon)`;
    rows.push(
      [name, 'latency p50', ms(c.latency.p50), '', ''],
      [name, 'latency p90', ms(c.latency.p90), '', ''],
      [name, 'latency p99', ms(c.latency.p99), '≤ 10 ms', met(c.latency.p99 <= 10)],
      [name, 'latency max', ms(c.latency.max), '', ''],
      [
        name,
        'achieved throughput',
        `${c.achievedRps.toFixed(1)} req/s (${c.responses} responses)`,
        `${c.rate} req/s`,
        met(c.achievedRps >= c.rate * 0.98),
      ],
      [name, 'non-2xx / errors (timeouts)', `${c.non2xx} / ${c.errors} (${c.timeouts})`, '0 / 0', met(c.non2xx === 0 && c.errors === 0)],
      [name, 'model calls during the run (one turn per task)', String(c.modelCalls), '', ''],
    );
    if (c.paced) {
      const p = c.paced;
      const paced = `1b. same rate, evenly paced open-loop client (supplementary)`;
      rows.push(
        [
          paced,
          'latency p50 / p90 / p99',
          `${ms(p.latency.p50)} / ${ms(p.latency.p90)} / ${ms(p.latency.p99)}`,
          '≤ 10 ms (p99)',
          met(p.latency.p99 <= 10),
        ],
        [paced, 'latency max', ms(p.latency.max), '', ''],
        [
          paced,
          'achieved throughput; non-2xx / errors / unanswered 15 s after the last send',
          `${p.achievedRps.toFixed(1)} req/s; ${p.non2xx} / ${p.errors} / ${p.unanswered}`,
          '',
          '',
        ],
      );
    }
  }
  if (r.sse) {
    const s = r.sse;
    const name = `2. append → SSE, ${s.subscribers} subscribers, ${s.appends} events every ${s.intervalMs} ms`;
    rows.push(
      [name, 'delivery latency p50', ms(s.latency.p50), '', ''],
      [name, 'delivery latency p99', ms(s.latency.p99), '≤ 5 ms', met(s.latency.p99 <= 5)],
      [name, 'delivery latency max', ms(s.latency.max), '', ''],
      [name, 'deliveries measured', `${s.latency.count} of ${s.subscribers * s.appends}`, '', ''],
      [
        name,
        'every client got every id exactly once, in order',
        `${s.exactlyOnce ? 'yes' : 'NO'}: ${s.completeClients}/${s.subscribers} complete, ${s.missing} missing, ${s.duplicates} duplicates, ${s.outOfOrder} out of order`,
        'yes',
        met(s.exactlyOnce),
      ],
      [name, 'diagnostic: one execute() call p50 / p99', `${ms(s.appendCall.p50)} / ${ms(s.appendCall.p99)}`, '', ''],
      [name, 'diagnostic: append start → store dispatch p50 / p99', `${ms(s.toDispatch.p50)} / ${ms(s.toDispatch.p99)}`, '', ''],
      [name, 'diagnostic: append start → first client p50 / p99', `${ms(s.toFirstClient.p50)} / ${ms(s.toFirstClient.p99)}`, '', ''],
      [name, 'diagnostic: append start → last client p50 / p99', `${ms(s.toLastClient.p50)} / ${ms(s.toLastClient.p99)}`, '', ''],
    );
  }
  if (r.replay) {
    const p = r.replay;
    const name = `3. replay ?after=0 of ${p.lastId} events, ${p.runsMs.length} runs`;
    rows.push(
      [name, 'request → last id, min', ms(p.minMs), '', ''],
      [name, 'request → last id, median', ms(p.medianMs), '≤ 300 ms', met(p.medianMs <= 300)],
      [name, 'request → last id, max', ms(p.maxMs), '≤ 300 ms', met(p.maxMs <= 300)],
      [name, 'all runs', p.runsMs.map((v) => v.toFixed(1)).join(', ') + ' ms', '', ''],
      [name, 'bytes per replay', `${(p.bytes / 1e6).toFixed(2)} MB`, '', ''],
      [name, 'complete and in order', p.complete ? 'yes' : 'NO', 'yes', met(p.complete)],
    );
  }
  if (r.sandbox) {
    const x = r.sandbox;
    const start = `4. sandboxed command start (bash -lc true), ${x.runs} runs`;
    const snap = `5. snapshot + restore of a ${Math.round(x.workspaceBytes / 1024 / 1024)} MB workspace (half random, half base64 text)`;
    rows.push(
      [start, 'bare process p50 / p90', `${ms(x.bareMs.p50)} / ${ms(x.bareMs.p90)}`, '', ''],
      [start, 'bubblewrap sandbox p50 / p90', `${ms(x.sandboxedMs.p50)} / ${ms(x.sandboxedMs.p90)}`, '', ''],
      [start, 'overhead (median difference)', ms(x.overheadMs), '≤ 7 ms', x.overheadMs <= 7 ? 'yes' : '**no**'],
      [
        `4b. workspace creation (own filesystem), ${x.createWorkspaceMs.runs} runs`,
        'p50 / p90',
        `${ms(x.createWorkspaceMs.p50)} / ${ms(x.createWorkspaceMs.p90)}`,
        '≤ 50 ms',
        x.createWorkspaceMs.p50 <= 50 ? 'yes' : '**no**',
      ],
      [
        snap,
        'snapshot (tar into the object store)',
        `${ms(x.snapshotMs)} (${(x.snapshotBytes / 1024 / 1024).toFixed(1)} MB archive)`,
        '',
        '',
      ],
      [snap, 'restore (from the object store)', ms(x.restoreMs), '', ''],
      [snap, 'snapshot + restore', ms(x.snapshotMs + x.restoreMs), '≤ 2 s', x.snapshotMs + x.restoreMs <= 2000 ? 'yes' : '**no**'],
      [snap, 'restored workspace intact', x.restoredIntact ? 'yes' : 'no', 'yes', x.restoredIntact ? 'yes' : '**no**'],
    );
  }
  if (r.approve) {
    const a = r.approve;
    const name = `6. approve POST → tool_result on SSE (${a.tool}, autoExecute false), ${a.runs} runs after ${a.warmupRuns} warm-up`;
    const pair = (s: { p50: number; p99: number }) => `${ms(s.p50)} / ${ms(s.p99)}`;
    rows.push(
      [name, 'latency p50 / p90', `${ms(a.latency.p50)} / ${ms(a.latency.p90)}`, '', ''],
      [name, 'latency p99', ms(a.latency.p99), '≤ 15 ms', met(a.latency.p99 <= 15)],
      [name, 'latency max', ms(a.latency.max), '', ''],
      [
        name,
        'runs with their tool_result',
        `${a.latency.count} of ${a.runs} (${a.failures} failed)`,
        `${a.runs} of ${a.runs}`,
        met(a.failures === 0 && a.latency.count === a.runs),
      ],
      [name, 'diagnostic: POST response p50 / p99', pair(a.postResponse), '', ''],
      [name, 'diagnostic: POST sent → ToolCallDecided dispatched p50 / p99', pair(a.toDecisionDispatched), '', ''],
      [name, 'diagnostic: → ToolCallStarted dispatched (runner wake-up, step, append) p50 / p99', pair(a.decisionToStarted), '', ''],
      [name, 'diagnostic: → tool bus request sent p50 / p99', pair(a.startedToToolRequest), '', ''],
      [name, 'diagnostic: tool bus request (session, load, tool, downloads/ scan) p50 / p99', pair(a.toolRequest), '', ''],
      [name, 'diagnostic: → ToolCallFinished dispatched (append) p50 / p99', pair(a.toolReplyToFinished), '', ''],
      [name, 'diagnostic: → tool_result at the SSE client p50 / p99', pair(a.finishedToSse), '', ''],
      [
        name,
        'diagnostic: POST sent → tool_result written by the service (ToolCallFinished dispatched) p50 / p99',
        pair(a.toServerWrite),
        '',
        '',
      ],
      [
        name,
        'diagnostic: appendToStream calls in the window p50 / p99; appends, stream reads per run',
        `${pair(a.appendCall)}; ${a.appendsPerRun.toFixed(1)}, ${a.readsPerRun.toFixed(1)}`,
        '',
        '',
      ],
    );
  }
  if (r.bounds) {
    const b = r.bounds;
    const t = MOVED_BOUND_TARGETS;
    const name = '7. bounds moved from tests';
    const mb = (n: number) => `${(n / 1024 / 1024).toFixed(1)} MB`;
    const rssLimit = b.streamedBytes * t.streamRssGrowthFraction;
    const flood = `${ms(b.outputFloodMs)}${b.outputFloodCut ? '' : ' (NOT cut)'}`;
    const streaming = `RSS growth streaming ${mb(b.streamedBytes)} through the local object store (object-store contract)`;
    rows.push(
      [
        name,
        'JSON depth scan of a million [ (json-depth.spec)',
        ms(b.jsonDepthScanMs),
        `≤ ${t.jsonDepthScanMs} ms`,
        met(b.jsonDepthScanMs <= t.jsonDepthScanMs),
      ],
      [
        name,
        'sandboxed 100 MB output cut at the limit (sandbox contract)',
        flood,
        `≤ ${t.outputFloodMs} ms`,
        met(b.outputFloodCut && b.outputFloodMs <= t.outputFloodMs),
      ],
      [name, streaming, mb(b.streamRssGrowthBytes), `< ${mb(rssLimit)}`, met(b.streamedIntact && b.streamRssGrowthBytes < rssLimit)],
    );
  }
  if (r.webhook) {
    const w = r.webhook;
    const name = `8. TurnCompleted recorded → task.completed webhook received, ${w.tasks} tasks finishing at once (after ${w.warmupTasks} warm-up)`;
    const three = (s: { p50: number; p99: number; max: number }) => `${ms(s.p50)} / ${ms(s.p99)} / ${ms(s.max)}`;
    rows.push(
      [name, 'latency p50 / p90', `${ms(w.latency.p50)} / ${ms(w.latency.p90)}`, '', ''],
      [name, 'latency p99', ms(w.latency.p99), '≤ 20 ms', met(w.latency.p99 <= 20)],
      [name, 'latency max', ms(w.latency.max), '', ''],
      [
        name,
        'messages received, distinct; repeated; retried',
        `${w.received} of ${w.tasks}; ${w.duplicates}; ${w.retried}`,
        `${w.tasks} of ${w.tasks}; 0`,
        met(w.received === w.tasks && w.duplicates === 0),
      ],
      [name, 'diagnostic: recorded → attempt started (deliveries endpoint) p50 / p99 / max', three(w.toAttemptStart), '', ''],
      [name, 'diagnostic: attempt started → received p50 / p99 / max', three(w.attemptToReceived), '', ''],
      [
        name,
        'diagnostic: first to last TurnCompleted recorded; release → last received',
        `${ms(w.finishSpreadMs)}; ${ms(w.releaseToLastMs)}`,
        '',
        '',
      ],
    );
    if (w.serviceThread && w.benchThread) {
      const sched = (s: { onCpuMs: number; waitingMs: number }) => `${ms(s.onCpuMs)} on a CPU, ${ms(s.waitingMs)} waiting for one`;
      rows.push([
        name,
        'diagnostic: release → last received, main threads: service; bench (model server)',
        `${sched(w.serviceThread)}; ${sched(w.benchThread)}`,
        '',
        '',
      ]);
    }
    if (w.serviceProcess && w.benchProcess && w.receiverProcess) {
      rows.push([
        name,
        'diagnostic: release → last received, every thread summed, on a CPU: service; bench; receiver process',
        `${ms(w.serviceProcess.onCpuMs)}; ${ms(w.benchProcess.onCpuMs)}; ${ms(w.receiverProcess.onCpuMs)}`,
        '',
        '',
      ]);
    }
    if (w.serviceThreads.length > 0) {
      rows.push([
        name,
        "diagnostic: release → last received, the service's threads on a CPU (main, then by thread id)",
        w.serviceThreads
          .filter((t) => t.onCpuMs >= 0.05)
          .map((t) => `${t.name} ${ms(t.onCpuMs)}`)
          .join('; '),
        '',
        '',
      ]);
    }
    if (w.serviceRssMiB !== undefined) {
      rows.push([
        name,
        'diagnostic: service RSS after the round (webhook sender thread running), peak',
        `${w.serviceRssMiB} MiB, ${w.servicePeakMiB} MiB`,
        '',
        '',
      ]);
    }
  }
  if (r.webhookAppend) {
    for (const [i, run] of r.webhookAppend.runs.entries()) {
      const name = `8b. follow-ups appended to running tasks (no message due), ${run.writers} writer(s)`;
      const label = `run ${i + 1}, webhooks ${run.webhooks ? 'on' : 'off'}`;
      rows.push(
        [name, `${label}: appends/s (${run.appends} appends)`, run.appendsPerSecond.toFixed(0), '', ''],
        [name, `${label}: execute() p50 / p99`, `${ms(run.appendCall.p50)} / ${ms(run.appendCall.p99)}`, '', ''],
        [
          name,
          `${label}: readAll, readStream calls per append`,
          `${run.readAllPerAppend.toFixed(2)}, ${run.readStreamPerAppend.toFixed(2)}`,
          '',
          '',
        ],
      );
    }
  }
  if (r.webhookBacklog) {
    const b = r.webhookBacklog;
    const name = `8c. webhook retries with ${b.messages} messages pending, receiver down`;
    rows.push(
      [name, 'service CPU per retry, less idle (every thread; refused at once, recorded)', `${b.cpuPerAttemptUs.toFixed(0)} µs`, '', ''],
      [name, 'retries measured; window', `${b.attempts}; ${(b.windowMs / 1000).toFixed(1)} s`, '', ''],
      [name, 'diagnostic: the service idle, before the tasks: CPU per second', ms(b.idleCpuMsPerS), '', ''],
      [
        name,
        "diagnostic: the window, the service's threads on a CPU (main, then by thread id)",
        b.threads.map((t) => `${t.name} ${ms(t.onCpuMs)}`).join('; '),
        '',
        '',
      ],
    );
  }
  if (r.sseCompiled) {
    const s = r.sseCompiled;
    const name = `2b. POST follow-up → SSE, ${s.subscribers} subscribers, ${s.followUps} follow-ups every ${s.intervalMs} ms, compiled child service`;
    rows.push(
      [name, 'latency p50 / p90', `${ms(s.latency.p50)} / ${ms(s.latency.p90)}`, '', ''],
      [name, 'latency p99 (POST sent → event at a client: holds the append)', ms(s.latency.p99), '≤ 5 ms', met(s.latency.p99 <= 5)],
      [name, 'latency max', ms(s.latency.max), '', ''],
      [name, 'diagnostic: POST round trip p50 / p99', `${ms(s.postResponse.p50)} / ${ms(s.postResponse.p99)}`, '', ''],
      [name, 'deliveries missing / repeated', `${s.missing} / ${s.duplicates}`, '0 / 0', met(s.missing === 0 && s.duplicates === 0)],
    );
  }
  if (r.footprint) rows.push(...footprintRows(r.footprint));
  if (r.step) {
    const name = `10. agent overhead per step, embedded, ${r.step.tasks} tasks of ${r.step.stepsPerTask} list_files steps (issue 19)`;
    const s = r.step;
    rows.push(
      [name, 'turn wall time per step p50 / p99', `${ms(s.stepWall.p50)} / ${ms(s.stepWall.p99)}`, '', ''],
      [name, 'scripted model server time per request p50', ms(s.modelServerMs.p50), '', ''],
      [
        name,
        'overhead per step (wall − tool durationMs − model server time) p50 / p99',
        `${ms(s.stepOverhead.p50)} / ${ms(s.stepOverhead.p99)}`,
        'p50 ≤ 2 ms',
        met(s.stepOverhead.p50 <= 2),
      ],
    );
  }
  if (r.egress) rows.push(...egressRows(r.egress));
  if (r.checkpoints) {
    const c = r.checkpoints;
    for (const step of c.steps) {
      const name = `12. checkpoint per step, ${step.scenario}, ${step.mode === 'hints' ? 'told by fanotify' : 'walking everything'}`;
      const target = step.scenario.startsWith('ws10k') ? 5 : 20;
      rows.push([
        name,
        'p50 / p90 (of it, the durable put p50)',
        `${ms(step.total.p50)} / ${ms(step.total.p90)} (${ms(step.put.p50)})`,
        step.mode === 'hints' ? `≤ ${target} ms p50` : '',
        step.mode === 'hints' ? met(step.total.p50 <= target) : '',
      ]);
    }
    const storage = '12b. 100 MB workspace (1,000 files), 100 steps each rewriting one 1 KiB file';
    rows.push(
      [storage, 'first checkpoint stored', `${(c.firstCheckpointBytes / 1e6).toFixed(2)} MB`, '', ''],
      [storage, 'stored by the 100 steps', `${(c.hundredStepsBytes / 1e6).toFixed(3)} MB`, '≤ 1 MB', met(c.hundredStepsBytes <= 1e6)],
    );
  }
  if (r.fork) {
    const f = r.fork;
    const name = `12c. fork of a task of ${f.sourceEvents} events, ${f.runs} runs`;
    rows.push([name, 'POST /fork → 201 p50 / p99', `${ms(f.forkMs.p50)} / ${ms(f.forkMs.p99)}`, '≤ 200 ms', met(f.forkMs.p99 <= 200)]);
  }
  if (r.schedules) {
    const c = r.schedules;
    const name = `14. ${c.schedules} schedules firing every minute (all-in-one)`;
    rows.push(
      [
        name,
        `CPU between firings (${c.betweenS.toFixed(0)} s)`,
        `${c.betweenPercent.toFixed(2)} % of a core`,
        '≤ 2 %',
        met(c.betweenPercent <= 2),
      ],
      [name, `CPU before the first firing (${c.idleBeforeS.toFixed(0)} s)`, `${c.idleBeforePercent.toFixed(2)} % of a core`, '', ''],
      [
        name,
        'one firing: CPU / wall (each run a task and its turn)',
        `${c.firingCpuS.toFixed(1)} s / ${c.firingWallS.toFixed(1)} s`,
        '',
        '',
      ],
      [
        name,
        'runs started (tasks completed) of 10 sampled schedules after two firings',
        c.runsPerScheduleSample.join(', '),
        '2 each',
        met(c.runsPerScheduleSample.every((n) => n === 2)),
      ],
    );
  }
  if (r.interrupt) {
    const i = r.interrupt;
    const name = `13. follow-up with ifRunning interrupt → the new turn's first model request, ${i.runs} runs`;
    const p = (s: Summary) => `${ms(s.p50)} / ${ms(s.p99)}`;
    rows.push(
      [name, 'while the model call hangs, p50 / p99', p(i.duringModelCall), '≤ 50 ms p99', met(i.duringModelCall.p99 <= 50)],
      [name, 'while a command runs (killed first), p50 / p99', p(i.duringCommand), '≤ 50 ms p99', met(i.duringCommand.p99 <= 50)],
      [name, 'POST → 201 (model-call case), p50 / p99', p(i.postResponse), '', ''],
    );
  }
  for (const [bench, message] of Object.entries(r.failures))
    rows.push([bench, 'FAILED', message.replace(/\|/g, '\\|').replace(/\n/g, ' '), '', '**no**']);
  for (const bench of r.skipped) rows.push([bench, 'skipped (BENCH_ONLY)', '', '', '']);

  const m = r.machine;
  return [
    `## Results (${r.startedAt})`,
    '',
    `Machine: ${m.cpu}, ${m.cores} cores, ${m.memoryGiB} GiB RAM, Node ${m.node}, ${m.os}.`,
    `Code: ${m.code}. Load average at start: ${m.loadAtStart}${m.loadAtStart > 0.5 ? ' (**other work was running: figures may be disturbed**)' : ''}.`,
    '',
    '| benchmark | figure | value | target | met |',
    '|---|---|---|---|---|',
    ...rows.map((row) => `| ${row.join(' | ')} |`),
    '',
  ].join('\n');
}

/** Issue 19's targets (embedded mode, 2 cores). */
export const FOOTPRINT_TARGETS = {
  startMs: 1_500,
  idleRssMiB: 150,
  loadedRssMiB: 250,
  rssDriftFraction: 0.1,
  tasksPerS: 1_000,
  createP99Ms: 50,
};

function footprintRows(f: FootprintFigures): Row[] {
  const t = FOOTPRINT_TARGETS;
  const name = `9. footprint and closed-loop creation, embedded, ${f.concurrency} workers (issue 19)`;
  const memory = (m: MemorySample): string =>
    `${m.rssMiB} MiB (peak ${m.peakMiB}` +
    (m.usage ? `; heap ${m.usage.heapUsed}/${m.usage.heapTotal}, external ${m.usage.external}, arrayBuffers ${m.usage.arrayBuffers}` : '') +
    ')';
  const rows: Row[] = [
    [
      name,
      'spawn → /healthz 200 (CPU time used)',
      `${ms(f.startMs)} (${f.startCpuMs} ms CPU)`,
      `≤ ${t.startMs} ms`,
      met(f.startMs <= t.startMs),
    ],
    [
      name,
      `RSS ${f.idleAfterStartS} s after start, fresh DATA_DIR (load ${f.loadAtStart})`,
      memory(f.afterStart),
      `≤ ${t.idleRssMiB} MiB`,
      met(f.afterStart.rssMiB <= t.idleRssMiB),
    ],
  ];
  let created = 0;
  for (const [i, b] of f.batches.entries()) {
    created += b.tasks;
    const label = `batch ${i + 1} (${b.tasks} tasks, load ${b.loadAtEnd} at its end)`;
    const drift = i > 0 ? Math.abs(b.memory.rssMiB - f.batches[0].memory.rssMiB) / f.batches[0].memory.rssMiB : 0;
    const rssTarget = i > 0 ? `≤ ${t.loadedRssMiB} MiB, within ${t.rssDriftFraction * 100} % of batch 1` : `≤ ${t.loadedRssMiB} MiB`;
    rows.push(
      [
        name,
        `${label}: RSS after ${created} tasks and ${f.idleAfterBatchS} s idle (no GC forced)`,
        memory(b.memory) + (i > 0 ? `, ${(drift * 100).toFixed(1)} % from batch 1` : ''),
        rssTarget,
        met(b.memory.rssMiB <= t.loadedRssMiB && drift <= t.rssDriftFraction),
      ],
      [
        name,
        `${label}: tasks created with their turn completed per second`,
        `${b.completedPerS.toFixed(1)} /s (${b.wallS.toFixed(1)} s)`,
        `≥ ${t.tasksPerS} /s`,
        met(b.completedPerS >= t.tasksPerS),
      ],
      [
        name,
        `${label}: POST latency p50 / p99 / max`,
        `${ms(b.createLatency.p50)} / ${ms(b.createLatency.p99)} / ${ms(b.createLatency.max)}`,
        `p99 ≤ ${t.createP99Ms} ms`,
        met(b.createLatency.p99 <= t.createP99Ms),
      ],
      [name, `${label}: status polls per task; model calls`, `${b.pollsPerTask.toFixed(2)}; ${b.modelCalls}`, '', ''],
      [name, `${label}: service CPU time per task (user + system)`, `${b.serviceCpuMsPerTask.toFixed(2)} ms`, '', ''],
    );
  }
  return rows;
}
