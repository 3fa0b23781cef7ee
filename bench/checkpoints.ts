import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { LocalObjectStore } from '@app/object-store/local/local-object-store';
import type { Baseline } from '../services/sandbox/src/workspace/checkpoints/baseline';
import { writeCheckpoint } from '../services/sandbox/src/workspace/checkpoints/checkpoint-writer';
import type { InProcessService } from './lib/in-process-service';
import type { Summary } from './lib/stats';
import { summarize } from './lib/stats';
import { makeTmpDir, removeDir } from './lib/tmp-dir';

// Benchmark 12: workspace checkpoints (docs/api.md "Time travel"). What a step costs and stores,
// with the writer the sandbox runs after each tool call (full walk: every entry is lstat'ed, only
// changed files are read), against the local object store; and a fork of a long task.

export interface CheckpointStepFigures {
  readonly files: number;
  readonly changedPerStep: number;
  readonly runs: number;
  readonly stepMs: Summary;
}

export interface CheckpointFigures {
  /** 10 files changed per step in a workspace of 10,000 files of 1 KiB (100 folders of 100). */
  readonly manyFiles: CheckpointStepFigures;
  /** 1 file changed per step in a 100 MB workspace (100 folders of 10 files of 100 KiB). */
  readonly bigWorkspace: CheckpointStepFigures;
  /** Bytes stored by the first checkpoint of the 100 MB workspace, then by 100 steps each rewriting one 1 KiB file. */
  readonly firstCheckpointBytes: number;
  readonly hundredStepsBytes: number;
}

export interface ForkFigures {
  readonly sourceEvents: number;
  readonly runs: number;
  /** POST /fork → 201 (the new task's events written, its view caught up). */
  readonly forkMs: Summary;
}

const WARMUP = 2;

/** Writes `dirs` folders of `perDir` files of `bytes` each. */
function fill(root: string, dirs: number, perDir: number, bytes: number): void {
  const body = Buffer.alloc(bytes, 'x');
  for (let d = 0; d < dirs; d++) {
    mkdirSync(join(root, `d${d}`));
    for (let f = 0; f < perDir; f++) writeFileSync(join(root, `d${d}`, `f${f}.bin`), body);
  }
}

async function scenario(
  dirs: number,
  perDir: number,
  bytes: number,
  changed: number,
  runs: number,
): Promise<{ figures: CheckpointStepFigures; firstBytes: number; stepBytes: number[] }> {
  const dir = await makeTmpDir('ckpt');
  try {
    const ws = join(dir, 'ws');
    mkdirSync(ws);
    fill(ws, dirs, perDir, bytes);
    const objects = new LocalObjectStore(join(dir, 'objects'));
    let seq = 0;
    let baseline: Baseline | undefined;
    const step = async () => {
      const written = await writeCheckpoint(objects, ws, baseline, {
        taskId: 'task_bench',
        lineage: 'task_bench',
        seq: ++seq,
        maxAddedBytes: 2 ** 31,
      });
      baseline = written.baseline;
      return written;
    };
    const firstBytes = (await step()).ref.addedBytes;
    const times: number[] = [];
    const stepBytes: number[] = [];
    for (let run = 0; run < WARMUP + runs; run++) {
      // A 1 KiB rewrite of `changed` files spread over the folders, as a command would leave them.
      for (let c = 0; c < changed; c++)
        writeFileSync(join(ws, `d${(run * 7 + c * 13) % dirs}`, `f${(run + c) % perDir}.bin`), `${run}-${c}`.padEnd(1024, '.'));
      const startedAt = performance.now();
      const written = await step();
      if (run >= WARMUP) {
        times.push(performance.now() - startedAt);
        stepBytes.push(written.ref.addedBytes);
      }
    }
    return { figures: { files: dirs * perDir, changedPerStep: changed, runs, stepMs: summarize(times) }, firstBytes, stepBytes };
  } finally {
    await removeDir(dir);
  }
}

export async function benchCheckpoints(options: { readonly log: (line: string) => void }): Promise<CheckpointFigures> {
  options.log('checkpoints: 10,000 files, 10 changed per step');
  const many = await scenario(100, 100, 1024, 10, 30);
  options.log('checkpoints: 100 MB, 1 changed per step, 100 steps');
  const big = await scenario(100, 10, 100 * 1024, 1, 100);
  return {
    manyFiles: many.figures,
    bigWorkspace: big.figures,
    firstCheckpointBytes: big.firstBytes,
    hundredStepsBytes: big.stepBytes.reduce((a, b) => a + b, 0),
  };
}

/** A task of `events` events (queued follow-ups behind a hanging turn), forked after its last one `runs` times. */
export async function benchFork(
  service: InProcessService,
  options: { readonly events: number; readonly runs: number; readonly log: (line: string) => void },
): Promise<ForkFigures> {
  const { id } = await service.createHangingTask();
  let last = 0;
  options.log(`fork: filling ${id} with ${options.events} events`);
  while (last < options.events) last = await service.appendFollowUp(id);
  const times: number[] = [];
  for (let run = 0; run < WARMUP + options.runs; run++) {
    const startedAt = performance.now();
    await service.api.fork(id, last);
    if (run >= WARMUP) times.push(performance.now() - startedAt);
  }
  return { sourceEvents: last, runs: options.runs, forkMs: summarize(times) };
}
