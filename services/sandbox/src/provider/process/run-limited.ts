import { spawn, StdioOptions } from 'node:child_process';
import { Readable, Writable } from 'node:stream';
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
  /**
   * The child's fds 3, 4, …: bytes are fed through a pipe that is then closed (the child reads
   * them to the end), a number is one of our open descriptors handed over, `null` leaves the fd closed.
   */
  readonly extraFds?: readonly (Buffer | number | null)[];
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
    const extra = p.extraFds ?? [];
    const stdio = [
      'ignore',
      'pipe',
      'pipe',
      ...extra.map((fd) => (fd === null ? 'ignore' : typeof fd === 'number' ? fd : 'pipe')),
    ] as StdioOptions;
    const child = spawn(p.argv[0], p.argv.slice(1), { cwd: p.cwd, env: { ...p.env }, detached: true, stdio });
    // Piped by the stdio above; the wide StdioOptions type hides that.
    const stdout = child.stdout as Readable;
    const stderr = child.stderr as Readable;
    extra.forEach((fd, i) => {
      if (!Buffer.isBuffer(fd)) return;
      const pipe = child.stdio[3 + i] as Writable | null;
      // A child that exits before reading closes its end: EPIPE is its failure to report, not ours.
      pipe?.on('error', () => undefined);
      pipe?.end(fd);
    });
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
    // One measurement at a time: on a big workspace a walk can take longer than the poll interval.
    let diskTimer: NodeJS.Timeout | undefined;
    const watchDisk = () => {
      diskTimer = setTimeout(() => {
        void diskUsage(p.workspace, p.limits.diskQuotaBytes).then((used) => {
          if (used > p.limits.diskQuotaBytes) kill('disk');
          else if (!settled) watchDisk();
        });
      }, DISK_POLL_MS);
    };
    watchDisk();
    stdout.on('data', output.push);
    stderr.on('data', output.push);
    child.on('error', (error) => {
      output.push(Buffer.from(`could not start the command: ${error.message}\n`));
      finish(127, null);
    });
    child.on('close', (code, signal) => finish(code, signal));

    async function finish(code: number | null, signal: NodeJS.Signals | null): Promise<void> {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearTimeout(diskTimer);
      p.signal?.removeEventListener('abort', onAbort);
      stdout.destroy();
      stderr.destroy();
      const overQuota = stoppedBy === undefined && (await diskUsage(p.workspace, p.limits.diskQuotaBytes)) >= p.limits.diskQuotaBytes;
      const text = output.text();
      const verdict = classifyExit({
        code,
        signal,
        stoppedBy: overQuota ? 'disk' : stoppedBy,
        output: text,
        truncated: output.truncated,
        limits: p.limits,
        timeoutMs: p.timeoutMs,
      });
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
