import { randomBytes } from 'node:crypto';
import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { compiledEntry } from '../../test/support/compiled-entry';
import { startScriptNodeFlags } from '../../test/support/start-script-flags';
import { sleep } from './timing';

const ROOT = join(__dirname, '..', '..');

// Children still running when the bench exits (watchdog, crash) are killed rather than orphaned.
const live = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of live) child.kill('SIGKILL');
});

export interface ChildService {
  readonly url: string;
  readonly child: ChildProcess;
  /** stdout + stderr so far (last 64 KiB). */
  output(): string;
  /** SIGTERM, then SIGKILL if it has not exited after `graceMs`. */
  stop(graceMs?: number): Promise<void>;
}

export interface ChildServiceOptions {
  readonly env: Record<string, string>;
  readonly port: number;
  /** When set, the child runs with --cpu-prof into this directory (written on exit). */
  readonly cpuProfDir?: string;
  readonly bootTimeoutMs?: number;
  /** Extra node options before the entry point (e.g. `-r` a preload script), after those of `npm start`. */
  readonly nodeArgs?: readonly string[];
  /** How often /healthz is polled while booting (the resolution of a start-time figure). */
  readonly healthPollMs?: number;
}

/**
 * What every benchmark's child is given: its own DATA_DIR, one API key, and the scripted model
 * (whole answers, not streamed); a benchmark adds its own.
 */
export function benchServiceEnv(dataDir: string, apiKey: string, modelUrl: string): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '',
    DATA_DIR: dataDir,
    API_KEYS: apiKey,
    LLM_BASE_URL: modelUrl,
    LLM_MODEL: 'bench',
    LLM_STREAM: 'false',
  };
}

/**
 * The variables that turn webhooks on, every task's messages going to `http://<hostPort>/hook`
 * (allowed although it is loopback), signed with a fresh random secret.
 */
export function benchWebhookEnv(hostPort: string): Record<string, string> {
  return {
    WEBHOOK_SECRET: `whsec_${randomBytes(32).toString('base64')}`,
    WEBHOOK_URL: `http://${hostPort}/hook`,
    WEBHOOK_ALLOW_HOSTS: hostPort,
  };
}

/**
 * Runs the all-in-one service as `npm start` does (its entry point and node options, then
 * `BENCH_NODE_ARGS`, space-separated, for experiments) as a child process and waits for /healthz.
 */
export async function startChildService(options: ChildServiceOptions): Promise<ChildService> {
  const profiling = options.cpuProfDir
    ? ['--cpu-prof', '--cpu-prof-dir', options.cpuProfDir, '-r', join(__dirname, 'exit-on-sigterm.js')]
    : [];
  const nodeArgs = [
    ...startScriptNodeFlags(),
    ...(options.nodeArgs ?? []),
    ...(process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean),
  ];
  const child = spawn(process.execPath, [...profiling, ...nodeArgs, compiledEntry('services/standalone/src/main.ts')], {
    cwd: ROOT,
    env: { ...options.env, PORT: String(options.port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  // BENCH_CHILD_OUTPUT (a file): the child's whole output is also appended there, for experiments
  // with V8's tracing flags in BENCH_NODE_ARGS.
  const copyTo = process.env.BENCH_CHILD_OUTPUT;
  const append = (chunk: Buffer) => {
    output = (output + chunk.toString('utf8')).slice(-65_536);
    if (copyTo) appendFileSync(copyTo, chunk);
  };
  child.stdout!.on('data', append);
  child.stderr!.on('data', append);
  live.add(child);
  const exited = new Promise<void>((resolve) =>
    child.once('exit', () => {
      live.delete(child);
      resolve();
    }),
  );
  const url = `http://127.0.0.1:${options.port}`;

  const stop = async (graceMs = 10_000): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    await exited;
    clearTimeout(timer);
  };

  const deadline = Date.now() + (options.bootTimeoutMs ?? 90_000);
  for (;;) {
    if (child.exitCode !== null) throw new Error(`service exited with code ${child.exitCode}:\n${output}`);
    const healthy = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(2_000) }).then(
      (r) => r.status === 200,
      () => false,
    );
    if (healthy) break;
    if (Date.now() > deadline) {
      await stop(1_000);
      throw new Error(`service did not answer /healthz within ${options.bootTimeoutMs ?? 90_000} ms:\n${output}`);
    }
    await sleep(options.healthPollMs ?? 100);
  }
  return { url, child, output: () => output, stop };
}
