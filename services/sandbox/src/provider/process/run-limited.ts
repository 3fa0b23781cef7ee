import { spawn } from 'node:child_process';
import { ExecResult, LimitHit, SandboxLimits } from '../sandbox-provider.port';
import { diskUsage } from './disk-usage';
import { OutputCollector } from './output-collector';
import { classifyExit } from './classify-exit';

export interface LimitedProcess {
  /** argv[0] and the rest; no shell in between. */
  readonly argv: readonly string[];
  /** The whole environment the process gets (nothing of the service's own leaks in). */
  readonly env: Readonly<Record<string, string>>;
  readonly cwd: string;
  /** Watched for the disk quota while the process runs. */
  readonly workspace: string;
  readonly limits: SandboxLimits;
  readonly timeoutMs: number;
  readonly signal?: AbortSignal;
}

const DISK_POLL_MS = 250;
/** After a kill, how long to wait for the pipes to close before giving up on them. */
const KILL_GRACE_MS = 2000;

/**
 * Runs one process in its own process group with every per-command bound the sandbox promises:
 * wall clock (the whole group is killed), output size, the workspace's disk quota (polled, and
 * checked once more at the end), cancellation. It never throws for the command's own failures.
 */
export function runLimited(p: LimitedProcess): Promise<ExecResult> {
  const startedAt = Date.now();
  const output = new OutputCollector(p.limits.maxOutputBytes);
  return new Promise<ExecResult>((resolve) => {
    let stoppedBy: LimitHit | 'cancelled' | undefined;
    let settled = false;
    const child = spawn(p.argv[0], p.argv.slice(1), { cwd: p.cwd, env: { ...p.env }, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    const kill = (reason: LimitHit | 'cancelled') => {
      stoppedBy ??= reason;
      try {
        if (child.pid) process.kill(-child.pid, 'SIGKILL');
      } catch {
        // already gone
      }
      // Pipes held open by a process that escaped the group must not keep us waiting.
      setTimeout(() => finish(null, 'SIGKILL'), KILL_GRACE_MS).unref();
    };
    const timer = setTimeout(() => kill('timeout'), p.timeoutMs);
    const onAbort = () => kill('cancelled');
    p.signal?.addEventListener('abort', onAbort, { once: true });
    if (p.signal?.aborted) onAbort();
    const diskTimer = setInterval(() => {
      void diskUsage(p.workspace, p.limits.diskQuotaBytes).then((used) => {
        if (used > p.limits.diskQuotaBytes) kill('disk');
      });
    }, DISK_POLL_MS);
    child.stdout.on('data', output.push);
    child.stderr.on('data', output.push);
    child.on('error', (error) => {
      output.push(Buffer.from(`could not start the command: ${error.message}\n`));
      finish(127, null);
    });
    child.on('close', (code, signal) => finish(code, signal));

    async function finish(code: number | null, signal: NodeJS.Signals | null): Promise<void> {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearInterval(diskTimer);
      p.signal?.removeEventListener('abort', onAbort);
      child.stdout.destroy();
      child.stderr.destroy();
      const overQuota = stoppedBy === undefined && (await diskUsage(p.workspace, p.limits.diskQuotaBytes)) >= p.limits.diskQuotaBytes;
      const text = output.text();
      const verdict = classifyExit({ code, signal, stoppedBy: overQuota ? 'disk' : stoppedBy, output: text, truncated: output.truncated, limits: p.limits, timeoutMs: p.timeoutMs });
      resolve({
        exitCode: stoppedBy === undefined ? code : null,
        output: text,
        truncated: output.truncated,
        durationMs: Date.now() - startedAt,
        ...(verdict ? { limitHit: verdict.limit, limitMessage: verdict.message } : {}),
        ...(stoppedBy === 'cancelled' ? { cancelled: true } : {}),
      });
    }
  });
}
