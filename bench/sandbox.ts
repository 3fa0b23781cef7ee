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
  readonly workspaceBytes: number;
  readonly snapshotBytes: number;
  readonly snapshotMs: number;
  readonly restoreMs: number;
  readonly restoredIntact: boolean;
}

const TASK_ID = `task_${'b'.repeat(32)}`;

/**
 * 4. Sandboxed command start overhead: `bash -lc true` through the whole bubblewrap launch
 * (prlimit, setpriv, bwrap, namespaces) against the same command as a bare child process, both
 * through the same runner (limits, output collection, disk watch).
 * 5. Snapshot + restore of a 100 MB workspace through the real path: provider snapshot streamed
 * into the local object store, workspace destroyed, restored from the object store.
 */
export async function benchSandbox(options: { runs: number; workspaceMb: number; log: (m: string) => void }): Promise<SandboxFigures> {
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
    for (let i = 0; i < options.runs + 5; i++) {
      let t = performance.now();
      await runLimited({
        argv: ['/bin/bash', '-lc', 'true'],
        env: { PATH: '/usr/bin:/bin' },
        cwd: workspace,
        limits: config.limits,
        timeoutMs: 10_000,
      });
      const b = performance.now() - t;
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
      workspaceBytes: files * 1024 * 1024,
      snapshotBytes: size,
      snapshotMs,
      restoreMs,
      restoredIntact: check.output.trim() === String(files),
    };
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
}
