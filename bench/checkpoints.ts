import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { LocalObjectStore } from '@app/object-store/local/local-object-store';
import type { Baseline } from '../services/sandbox/src/workspace/checkpoints/baseline';
import { writeCheckpoint } from '../services/sandbox/src/workspace/checkpoints/checkpoint-writer';
import type { HintedCheckpointFigures } from './checkpoint-hints';
import { SCENARIOS, measureCheckpointSteps } from './checkpoint-hints';
import { builtFswatch } from '../services/sandbox/src/workspace/checkpoints/testing/loop-image';
import type { InProcessService } from './lib/in-process-service';
import type { Summary } from './lib/stats';
import { summarize } from './lib/stats';
import { makeTmpDir, removeDir } from './lib/tmp-dir';

// Benchmark 12: workspace checkpoints (docs/api.md "Time travel"). What a step costs and stores,
// with the writer the sandbox runs after each tool call (full walk: every entry is lstat'ed, only
// changed files are read), against the local object store; and a fork of a long task.

export interface CheckpointFigures {
  /**
   * Per step, on an ext4 loop image as a task's own, told by fanotify (hints) and walking
   * everything (walk): 10 of 10,000 files of 1 KiB changed, and 1 file of a 100 MB workspace.
   */
  readonly steps: readonly HintedCheckpointFigures[];
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

/** Bytes the first checkpoint of `dirs` × `perDir` files of `bytes` stores, then each of `steps` steps rewriting one 1 KiB file. */
async function storedBySteps(
  dirs: number,
  perDir: number,
  bytes: number,
  steps: number,
): Promise<{ firstBytes: number; stepBytes: number[] }> {
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
    const stepBytes: number[] = [];
    for (let run = 0; run < steps; run++) {
      writeFileSync(join(ws, `d${(run * 7) % dirs}`, `f${run % perDir}.bin`), `${run}`.padEnd(1024, '.'));
      stepBytes.push((await step()).ref.addedBytes);
    }
    return { firstBytes, stepBytes };
  } finally {
    await removeDir(dir);
  }
}

export async function benchCheckpoints(options: { readonly log: (line: string) => void }): Promise<CheckpointFigures> {
  const steps: HintedCheckpointFigures[] = [];
  const binary = builtFswatch();
  for (const each of SCENARIOS) {
    options.log(`checkpoints: ${each.name}, with hints and walking everything`);
    steps.push(...(await measureCheckpointSteps(each, binary)));
  }
  options.log('checkpoints: 100 MB, 1 KiB changed per step, 100 steps: bytes stored');
  const big = await storedBySteps(100, 10, 100 * 1024, 100);
  return {
    steps,
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
