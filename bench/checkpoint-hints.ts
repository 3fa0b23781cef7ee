// The checkpoint a step adds, told what changed by fanotify (native/ats-fswatch) against walking the
// whole workspace, on an ext4 loop image like a task's own and the local object store (fsync'd puts):
//   npx ts-node --transpile-only -r tsconfig-paths/register bench/checkpoint-hints.ts
// (benchmark 12 of `npm run bench` runs the same measurement).
// Root only (loop mount, fanotify). Scenarios as docs/design/workspace-checkpoints.md measured them:
// ws10k = 100 dirs x 100 files x 1 KiB with 10 files (in 10 folders) appended to before each run;
// ws100m = 100 dirs x 10 files x 100 KiB with 1 file appended to. p50/p90 over RUNS after WARMUP.
import { appendFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { LocalObjectStore } from '@app/object-store/local/local-object-store';
import type { Baseline } from '../services/sandbox/src/workspace/checkpoints/baseline';
import { writeCheckpoint } from '../services/sandbox/src/workspace/checkpoints/checkpoint-writer';
import { FanotifyHints } from '../services/sandbox/src/workspace/checkpoints/fanotify-hints';
import { builtFswatch, mountLoopImage } from '../services/sandbox/src/workspace/checkpoints/testing/loop-image';
import type { Summary } from './lib/stats';
import { summarize } from './lib/stats';

// A sandbox service checkpoints every task's steps: its code is warm. 20 steps warm it (2 left the
// first measured steps in the JIT's and the loop image's warm-up: p50 over 30 of them ran 1.5–2 times
// the steady figure).
const RUNS = Number(process.env.RUNS ?? 100);
const WARMUP = Number(process.env.WARMUP ?? 20);

interface Scenario {
  readonly name: string;
  readonly dirs: number;
  readonly filesPerDir: number;
  readonly fileBytes: number;
  readonly changed: number;
}

export const SCENARIOS: readonly Scenario[] = [
  { name: 'ws10k, 10 changed', dirs: 100, filesPerDir: 100, fileBytes: 1024, changed: 10 },
  { name: 'ws100m, 1 changed', dirs: 100, filesPerDir: 10, fileBytes: 100 * 1024, changed: 1 },
];

export interface HintedCheckpointFigures {
  readonly scenario: string;
  readonly mode: 'hints' | 'walk';
  /** Drain of the helper alone (hints only). */
  readonly detect?: Summary;
  /** Time inside the object store's put (the pack, fsync'd file and folder). */
  readonly put: Summary;
  /** Drain + writeCheckpoint (read, hash, nodes, one durable put). */
  readonly total: Summary;
}

export async function measureCheckpointSteps(scenario: Scenario, binary: string): Promise<HintedCheckpointFigures[]> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-ckpt-'));
  const image = await mountLoopImage(dir, 1024 ** 3);
  const hints = new FanotifyHints(binary);
  try {
    const content = Buffer.alloc(scenario.fileBytes, 'x');
    for (let d = 0; d < scenario.dirs; d++) {
      mkdirSync(join(image.mountpoint, `d${d}`));
      for (let f = 0; f < scenario.filesPerDir; f++) writeFileSync(join(image.mountpoint, `d${d}`, `f${f}`), content);
    }
    const local = new LocalObjectStore(join(dir, 'objects'));
    let putMs = 0;
    // The store with its puts timed: the durable put is a fixed cost of any checkpoint, walk or not.
    const objects = new Proxy(local, {
      get: (target, key: keyof LocalObjectStore) => {
        if (key !== 'put') return (target[key] as (...args: unknown[]) => unknown).bind(target);
        return async (...args: Parameters<LocalObjectStore['put']>) => {
          const started = performance.now();
          try {
            return await target.put(...args);
          } finally {
            putMs += performance.now() - started;
          }
        };
      },
    });
    await hints.watch('task_bench', image.mountpoint);
    let run = 0;
    // Appended to in as many folders as files changed: each one's folder is re-listed.
    const change = () => {
      run++;
      for (let i = 0; i < scenario.changed; i++) {
        const d = (run * 7 + i * 13) % scenario.dirs;
        appendFileSync(join(image.mountpoint, `d${d}`, `f${(run + i) % scenario.filesPerDir}`), `run ${run}\n`);
      }
    };
    const figures: HintedCheckpointFigures[] = [];
    for (const mode of ['hints', 'walk'] as const) {
      const lineage = `task_${mode}`;
      let seq = 0;
      const checkpoint = async (previous: Baseline | undefined) => {
        putMs = 0;
        const started = performance.now();
        const drained = mode === 'hints' ? await hints.drain('task_bench') : 'rescan';
        const drainedAt = performance.now();
        const written = await writeCheckpoint(objects, image.mountpoint, previous, {
          taskId: lineage,
          lineage,
          seq: ++seq,
          maxAddedBytes: 1024 ** 3,
          hints: drained === 'rescan' ? undefined : drained,
        });
        if (mode === 'hints' && previous && drained === 'rescan') throw new Error('the helper said rescan mid-run');
        return { written, detect: drainedAt - started, put: putMs, total: performance.now() - started };
      };
      // The first checkpoint of the chain walks everything (it has no baseline): not counted.
      let baseline = (await checkpoint(undefined)).written.baseline;
      const detect: number[] = [];
      const put: number[] = [];
      const total: number[] = [];
      for (let i = 0; i < WARMUP + RUNS; i++) {
        change();
        const step = await checkpoint(baseline);
        baseline = step.written.baseline;
        if (step.written.changes.length !== scenario.changed)
          throw new Error(`${step.written.changes.length} changes, not ${scenario.changed}`);
        if (i < WARMUP) continue;
        detect.push(step.detect);
        put.push(step.put);
        total.push(step.total);
      }
      figures.push({
        scenario: scenario.name,
        mode,
        ...(mode === 'hints' ? { detect: summarize(detect) } : {}),
        put: summarize(put),
        total: summarize(total),
      });
    }
    return figures;
  } finally {
    await hints.close();
    await image.unmount();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const binary = builtFswatch();
  const round = (n: number) => Math.round(n * 100) / 100;
  for (const scenario of SCENARIOS) {
    for (const figures of await measureCheckpointSteps(scenario, binary)) {
      const detect = figures.detect ? `, drain ${round(figures.detect.p50)} / ${round(figures.detect.p90)}` : '';
      const parts = `put ${round(figures.put.p50)} / ${round(figures.put.p90)}${detect}`;
      console.log(
        `${figures.scenario}, ${figures.mode}: p50 ${round(figures.total.p50)} ms, p90 ${round(figures.total.p90)} ms (${parts})`,
      );
      console.log(JSON.stringify(figures));
    }
  }
}

// Run on its own; `npm run bench` (benchmark 12) imports the measurement.
if (require.main === module) {
  void main().catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  });
}
