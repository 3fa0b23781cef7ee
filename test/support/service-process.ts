import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { compiledEntry } from './compiled-entry';
import { startScriptNodeFlags } from './start-script-flags';

const ROOT = join(__dirname, '..', '..');

/** A free loopback port (listen on 0, read it, close). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

export interface ServiceProcess {
  readonly child: ChildProcess;
  readonly url: string;
  /** stdout and stderr, interleaved as they came. */
  output(): string;
  /** stdout alone (the log lines). */
  stdout(): string;
  /** SIGKILL: no shutdown hook runs, exactly like a crash. */
  kill9(): Promise<void>;
  stop(): Promise<void>;
  /** SIGTERM, and how the process ended: its exit code or signal, and how long it took. */
  terminate(): Promise<ProcessExit>;
}

export interface ProcessExit {
  readonly code: number | null;
  readonly signal: string | null;
  readonly ms: number;
}

/** Runs `npm start`'s entry point as a real child process and waits for /healthz. */
export function startServiceProcess(env: Record<string, string>, port: number): Promise<ServiceProcess> {
  return startEntryProcess(
    'services/standalone/src/main.ts',
    { ...env, PORT: String(port) },
    { healthUrl: `http://127.0.0.1:${port}` },
    startScriptNodeFlags(),
  );
}

/**
 * Runs one service entry point (its compiled form under dist/, as `npm run start:<service>` does)
 * as a real child process; ready when `healthUrl`/healthz answers, or else when its output contains `readyLine`.
 */
export async function startEntryProcess(
  entry: string,
  env: Record<string, string>,
  ready: { healthUrl?: string; readyLine?: string },
  nodeFlags: readonly string[] = [],
): Promise<ServiceProcess> {
  const child = spawn(process.execPath, [...nodeFlags, compiledEntry(entry)], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  let stdout = '';
  child.stdout!.on('data', (d) => {
    output += d;
    stdout += d;
  });
  child.stderr!.on('data', (d) => (output += d));
  const url = ready.healthUrl ?? '';
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const until = Date.now() + 90_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${entry} exited with ${child.exitCode}:\n${output}`);
    const ok = ready.healthUrl
      ? await fetch(`${url}/healthz`).then(
          (r) => r.ok,
          () => false,
        )
      : output.includes(ready.readyLine ?? '\u0000never');
    if (ok) break;
    if (Date.now() > until) {
      child.kill('SIGKILL');
      throw new Error(`${entry} did not become ready:\n${output}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    child,
    url,
    output: () => output,
    stdout: () => stdout,
    async kill9() {
      child.kill('SIGKILL');
      await exited;
    },
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    },
    async terminate() {
      const startedAt = Date.now();
      child.kill('SIGTERM');
      await exited;
      return { code: child.exitCode, signal: child.signalCode, ms: Date.now() - startedAt };
    },
  };
}
