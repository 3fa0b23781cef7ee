import type { LimitHit, SandboxLimits } from '../sandbox-provider.port';

export interface ExitFacts {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  /** What we killed the command for, if we did. */
  readonly stoppedBy?: LimitHit | 'cancelled';
  readonly output: string;
  readonly truncated: boolean;
  readonly limits: SandboxLimits;
  readonly timeoutMs: number;
  /** Processes the kernel killed in the task's cgroup for going over its memory limit during the command. */
  readonly oomKills?: number;
  /** Forks the task's cgroup refused at its process limit during the command. */
  readonly processLimitHits?: number;
  /** The workspace (a filesystem of its own) has no room or no inode left. */
  readonly workspaceFull?: boolean;
  /** A folder workspace measured at or over its quota once the command ended (no filesystem of its own). */
  readonly overQuota?: boolean;
  /** Memory and processes are bounded for the task as a whole (a cgroup), not per process (rlimits). */
  readonly boundsPerTask?: boolean;
}

// A shell reports death by signal N as exit 128 + N; the sandbox's init passes that on.
const SIGXCPU_EXIT = 128 + 24;
const SIGXFSZ_EXIT = 128 + 25;
const SIGKILL_EXIT = 128 + 9;
const FILE_TOO_BIG = /File size limit exceeded/;
const FORK_FAILED = /fork: (retry: )?Resource temporarily unavailable|Cannot fork|can't fork|fork failed/i;
const NO_MEMORY = /Cannot allocate memory|MemoryError|std::bad_alloc|out of memory|JavaScript heap|failed to reserve/i;
const NO_SPACE = /No space left on device|Disk quota exceeded/;

/**
 * Which limit stopped (or cut) a command, with a message that names its setting. Timeout, disk
 * and cancel are certain (we did the killing), and so are the task's cgroup counters and a full
 * workspace filesystem; CPU and file size show in the exit status; where only rlimits bound
 * processes and memory, system calls fail, and that is recognised from what the command printed.
 */
export function classifyExit(f: ExitFacts): { limit: LimitHit; message: string } | undefined {
  const forkFailed = (f.processLimitHits ?? 0) > 0 || FORK_FAILED.test(f.output);
  const memory = {
    limit: 'memory' as const,
    message: `the task's processes together, with what they keep in /tmp and /dev/shm, went over ${f.limits.memoryBytes} bytes (SANDBOX_MEMORY_BYTES): the command was stopped`,
  };
  const processNote = forkFailed ? `; the process limit (${f.limits.maxProcesses}, SANDBOX_MAX_PROCESSES) was also reached` : '';
  switch (f.overQuota && f.stoppedBy === undefined ? 'disk' : f.stoppedBy) {
    case 'timeout':
      return {
        limit: 'timeout',
        message: `killed after ${f.timeoutMs} ms: wall-clock limit (SANDBOX_TIMEOUT_MS or the call's timeoutMs)${processNote}`,
      };
    case 'disk':
      return {
        limit: 'disk',
        message: `the workspace went over its disk quota of ${f.limits.diskQuotaBytes} bytes (SANDBOX_DISK_QUOTA_BYTES); delete files to make room`,
      };
    case 'memory':
      return memory;
    case 'cancelled':
      return undefined;
    default:
      break;
  }
  if ((f.oomKills ?? 0) > 0) return memory;
  if (f.code === SIGXCPU_EXIT || f.signal === 'SIGXCPU') {
    return { limit: 'cpu', message: `killed after ${f.limits.cpuSeconds} s of CPU time (SANDBOX_CPU_SECONDS)` };
  }
  if (f.code === SIGKILL_EXIT) {
    return {
      limit: 'cpu',
      message: `killed (SIGKILL) at the hard CPU limit of ${f.limits.cpuSeconds + 1} s (SANDBOX_CPU_SECONDS), or by the kernel for lack of memory`,
    };
  }
  if (f.code === SIGXFSZ_EXIT || f.signal === 'SIGXFSZ' || FILE_TOO_BIG.test(f.output)) {
    return { limit: 'disk', message: `a file reached the disk quota of ${f.limits.diskQuotaBytes} bytes (SANDBOX_DISK_QUOTA_BYTES)` };
  }
  if (f.workspaceFull && NO_SPACE.test(f.output)) {
    return {
      limit: 'disk',
      message: `the workspace is full: it holds at most ${f.limits.diskQuotaBytes} bytes (SANDBOX_DISK_QUOTA_BYTES); delete files to make room`,
    };
  }
  if (forkFailed) {
    const scope = f.boundsPerTask ? "the task's processes at once" : 'processes of the task';
    return {
      limit: 'processes',
      message: `could not start more processes: ${scope} are limited to ${f.limits.maxProcesses} (SANDBOX_MAX_PROCESSES)`,
    };
  }
  if (f.code !== 0 && NO_MEMORY.test(f.output)) {
    return {
      limit: 'memory',
      message: `memory allocation failed: each process may use ${f.limits.memoryBytes} bytes (SANDBOX_MEMORY_BYTES)`,
    };
  }
  if (f.truncated) return { limit: 'output', message: `output cut after ${f.limits.maxOutputBytes} bytes (SANDBOX_MAX_OUTPUT_BYTES)` };
  return undefined;
}
