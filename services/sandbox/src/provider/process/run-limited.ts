import type { ChildProcess, StdioOptions } from 'node:child_process';
import { spawn } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import type { ExecResult, FileOwner, LimitHit, SandboxLimits } from '../sandbox-provider.port';
import { OutputCollector } from './output-collector';
import type { ExitFacts } from './classify-exit';
import { classifyExit } from './classify-exit';

/** What the host knows about an ended command that its exit status does not say. */
export type HostFacts = Pick<ExitFacts, 'oomKills' | 'processLimitHits' | 'workspaceFull' | 'overQuota' | 'boundsPerTask'>;

export interface LimitedProcess {
  /** argv[0] and the rest; no shell in between. */
  readonly argv: readonly string[];
  /** The whole environment the process gets (nothing of the service's own leaks in). */
  readonly env: Readonly<Record<string, string>>;
  readonly cwd: string;
  /** Started as this user: the service drops to it between fork and exec, so no privileged process runs it. */
  readonly user?: FileOwner;
  readonly limits: SandboxLimits;
  readonly timeoutMs: number;
  readonly signal?: AbortSignal;
  /**
   * The child's fds 3, 4, …: bytes are fed through a pipe that is then closed (the child reads
   * them to the end), a number is one of our open descriptors handed over, `null` leaves the fd closed.
   */
  readonly extraFds?: readonly (Buffer | number | null)[];
  /**
   * Awaited once the process exists and before its extra fds get their bytes (bwrap waits for
   * its options on fd 3, so it has started nothing yet): where it joins its task's cgroup.
   */
  readonly beforeStart?: (pid: number) => Promise<void>;
  /** Asked every 250 ms while it runs (one question at a time): a limit it names stops the command. */
  readonly watch?: () => Promise<LimitHit | undefined>;
  /** Asked once it has ended, before the verdict: what the host saw of it. */
  readonly facts?: (output: string) => Promise<HostFacts>;
  /** Awaited once it has ended, whatever happened (a cgroup emptied of what is left). */
  readonly afterExit?: () => Promise<void>;
  /** The command's stdin (a restore's archive); absent: none. */
  readonly stdin?: Readable;
  /** Where stdout goes instead of the output (a snapshot's archive); stderr stays the output. */
  readonly stdout?: Writable;
}

const WATCH_MS = 250;
/** After a kill, how long to wait for the pipes to close before giving up on them. */
const KILL_GRACE_MS = 2000;

/**
 * Starts a process as runLimited runs it (its own process group; stdin only when given; stdout,
 * stderr and the extra fds piped), without feeding or watching it yet: a launcher spawned ahead
 * of its command waits, blocked on its fds, until runLimited takes it.
 */
export function spawnLimited(p: Pick<LimitedProcess, 'argv' | 'env' | 'cwd' | 'user' | 'extraFds' | 'stdin'>): ChildProcess {
  const stdio = [
    p.stdin ? 'pipe' : 'ignore',
    'pipe',
    'pipe',
    ...(p.extraFds ?? []).map((fd) => (fd === null ? 'ignore' : typeof fd === 'number' ? fd : 'pipe')),
  ] as StdioOptions;
  const user = p.user ? { uid: p.user.uid, gid: p.user.gid } : {};
  return spawn(p.argv[0], p.argv.slice(1), { cwd: p.cwd, env: { ...p.env }, detached: true, stdio, ...user });
}

/**
 * Runs one process (or takes one that spawnLimited started ahead) in its own process group with
 * every per-command bound the sandbox promises: wall clock (the whole group is killed), output
 * size, what the watcher stops it for (memory, a folder workspace's quota), cancellation. It
 * never throws for the command's own failures.
 */
export function runLimited(p: LimitedProcess, spawned?: ChildProcess): Promise<ExecResult> {
  const startedAt = Date.now();
  const output = new OutputCollector(p.limits.maxOutputBytes);
  return new Promise<ExecResult>((resolve) => {
    let stoppedBy: LimitHit | 'cancelled' | undefined;
    let settled = false;
    const extra = p.extraFds ?? [];
    const child = spawned ?? spawnLimited(p);
    // Piped by spawnLimited; the wide StdioOptions type hides that.
    const stdout = child.stdout as Readable;
    const stderr = child.stderr as Readable;
    const kill = (reason: LimitHit | 'cancelled') => {
      stoppedBy ??= reason;
      try {
        if (child.pid) process.kill(-child.pid, 'SIGKILL');
      } catch {
        // already gone
      }
      // Pipes held open by a process that escaped the group must not keep us waiting.
      setTimeout(() => void finish(null, 'SIGKILL'), KILL_GRACE_MS).unref();
    };
    const timer = setTimeout(() => kill('timeout'), p.timeoutMs);
    const onAbort = () => kill('cancelled');
    p.signal?.addEventListener('abort', onAbort, { once: true });
    if (p.signal?.aborted) onAbort();
    let watchTimer: NodeJS.Timeout | undefined;
    const watch = () => {
      if (!p.watch) return;
      watchTimer = setTimeout(() => {
        void p.watch?.().then((hit) => {
          if (hit) kill(hit);
          else if (!settled) watch();
        });
      }, WATCH_MS);
    };
    if (p.stdout) stdout.pipe(p.stdout, { end: false });
    else stdout.on('data', output.push);
    stderr.on('data', output.push);
    child.on('error', (error) => {
      output.push(Buffer.from(`could not start the command: ${error.message}\n`));
      void finish(127, null);
    });
    child.on('close', (code, signal) => void finish(code, signal));
    if (p.stdin) {
      const stdin = child.stdin as Writable;
      stdin.on('error', () => undefined); // a child that stops reading (tar refusing an archive) closes it: its exit says why
      p.stdin.on('error', () => kill('cancelled'));
      p.stdin.pipe(stdin);
    }
    void start();

    /** Places the process (beforeStart), then hands it its fds' bytes, then watches it. */
    async function start(): Promise<void> {
      if (child.pid !== undefined && p.beforeStart) {
        try {
          await p.beforeStart(child.pid);
        } catch (error) {
          output.push(Buffer.from(`could not start the command: ${(error as Error).message}\n`));
          kill('cancelled');
          return;
        }
      }
      extra.forEach((fd, i) => {
        if (!Buffer.isBuffer(fd)) return;
        const pipe = child.stdio[3 + i] as Writable | null;
        // A child that exits before reading closes its end: EPIPE is its failure to report, not ours.
        pipe?.on('error', () => undefined);
        pipe?.end(fd);
      });
      watch();
    }

    async function finish(code: number | null, signal: NodeJS.Signals | null): Promise<void> {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearTimeout(watchTimer);
      p.signal?.removeEventListener('abort', onAbort);
      stdout.destroy();
      stderr.destroy();
      await p.afterExit?.().catch(() => undefined);
      const text = output.text();
      const facts = (await p.facts?.(text).catch(() => undefined)) ?? {};
      const verdict = classifyExit({
        code,
        signal,
        stoppedBy,
        output: text,
        truncated: output.truncated,
        limits: p.limits,
        timeoutMs: p.timeoutMs,
        ...facts,
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
