import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalObjectStore } from '../libs/object-store/src/local/local-object-store';
import { BubblewrapProvider } from '../services/sandbox/src/provider/bubblewrap/bubblewrap.provider';
import { runLimited } from '../services/sandbox/src/provider/process/run-limited';
import { sandboxConfigFromEnv } from '../services/sandbox/src/provider/sandbox.config';
import { summarize } from './lib/stats';

export interface SandboxFigures {
  readonly runs: number;
  readonly bareMs: { p50: number; p90: number };
  readonly sandboxedMs: { p50: number; p90: number };
  /** Median sandboxed − median bare. */
  readonly overheadMs: number;
  /** A new task's workspace made and mounted (its own ext4 filesystem on a loop device, its uid claimed). */
  readonly createWorkspaceMs: { p50: number; p90: number; runs: number };
  /** How the host bounded the sandboxes measured (the provider's start-up lines). */
  readonly enforced: readonly string[];
  readonly workspaceBytes: number;
  readonly snapshotBytes: number;
  readonly snapshotMs: number;
  readonly restoreMs: number;
  readonly restoredIntact: boolean;
}

const TASK_ID = `task_${'b'.repeat(32)}`;

/**
 * 4. Sandboxed command start overhead: `bash -lc true` through the whole bubblewrap launch
 * (fork and drop to the task's uid, prlimit, bwrap with a user namespace and the rest, the
 * task's cgroup joined and read) against the same command as a bare child process, both through
 * the same runner (limits, output collection).
 * 4b. Workspace creation: a new task's workspace made and mounted, with its own filesystem.
 * 5. Snapshot + restore of a 100 MB workspace through the real path: provider snapshot streamed
 * into the local object store, workspace destroyed, restored from the object store.
 */
export async function benchSandbox(options: {
  runs: number;
  creates: number;
  workspaceMb: number;
  log: (m: string) => void;
}): Promise<SandboxFigures> {
  const dataDir = await mkdtemp(join(tmpdir(), 'ats-bench-sandbox-'));
  const config = sandboxConfigFromEnv({});
  const provider = new BubblewrapProvider(config, dataDir);
  try {
    const health = await provider.check();
    if (!health.ok) throw new Error(`bubblewrap does not work here: ${health.reason}`);
    const taskId = TASK_ID;
    const workspace = await provider.create(taskId);
    const bare: number[] = [];
    const sandboxed: number[] = [];
    // An agent's commands come a model call apart: each start is timed after a pause (BENCH_SANDBOX_PAUSE_MS, default 50; 0 = back to back).
    const pauseMs = Number(process.env.BENCH_SANDBOX_PAUSE_MS ?? 50);
    const pause = () => new Promise((resolve) => setTimeout(resolve, pauseMs));
    for (let i = 0; i < options.runs + 5; i++) {
      if (pauseMs > 0) await pause();
      let t = performance.now();
      await runLimited({
        argv: ['/bin/bash', '-lc', 'true'],
        env: { PATH: '/usr/bin:/bin' },
        cwd: workspace,
        limits: config.limits,
        timeoutMs: 10_000,
      });
      const b = performance.now() - t;
      if (pauseMs > 0) await pause();
      t = performance.now();
      const result = await provider.exec(taskId, { command: 'true', env: {} });
      const s = performance.now() - t;
      if (result.exitCode !== 0) throw new Error(`sandboxed true failed: ${result.output}`);
      if (i >= 5) {
        bare.push(b);
        sandboxed.push(s);
      }
    }
    options.log(`sandbox: ${options.runs} starts measured`);

    const creates: number[] = [];
    for (let i = 0; i < options.creates + 3; i++) {
      const id = `task_${randomBytes(16).toString('hex')}`;
      const t = performance.now();
      await provider.create(id);
      if (i >= 3) creates.push(performance.now() - t);
      await provider.destroy(id);
    }
    options.log(`sandbox: ${options.creates} workspace creations measured`);

    // A mixed workspace: half random bytes (incompressible), half text-like (base64 of random).
    const files = options.workspaceMb;
    await mkdir(join(workspace, 'data'), { recursive: true });
    for (let i = 0; i < files; i++) {
      const content = i % 2 === 0 ? randomBytes(1024 * 1024) : Buffer.from(randomBytes(768 * 1024).toString('base64'));
      await writeFile(join(workspace, 'data', `f${i}.bin`), content);
    }
    const objects = new LocalObjectStore(join(dataDir, 'objects'));
    const bounds = { maxBytes: 2 * 1024 ** 3, timeoutMs: 120_000 };
    let t = performance.now();
    const { size } = await objects.put('snapshots/bench.tar', provider.snapshot(taskId, bounds));
    const snapshotMs = performance.now() - t;
    await provider.destroy(taskId);
    t = performance.now();
    await provider.restore(taskId, await objects.get('snapshots/bench.tar'), bounds);
    const restoreMs = performance.now() - t;
    const check = await provider.exec(taskId, { command: 'ls data | wc -l', env: {} });
    options.log(`sandbox: snapshot ${snapshotMs.toFixed(0)} ms, restore ${restoreMs.toFixed(0)} ms`);
    const p = (xs: number[]) => ({ p50: summarize(xs).p50, p90: summarize(xs).p90 });
    return {
      runs: options.runs,
      bareMs: p(bare),
      sandboxedMs: p(sandboxed),
      overheadMs: summarize(sandboxed).p50 - summarize(bare).p50,
      createWorkspaceMs: { ...p(creates), runs: options.creates },
      enforced: health.enforced ?? [],
      workspaceBytes: files * 1024 * 1024,
      snapshotBytes: size,
      snapshotMs,
      restoreMs,
      restoredIntact: check.output.trim() === String(files),
    };
  } finally {
    await provider.destroy(TASK_ID).catch(() => undefined);
    await rm(dataDir, { recursive: true, force: true });
  }
}
