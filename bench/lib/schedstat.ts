import { readFileSync } from 'node:fs';

/** A thread's scheduler counters (Linux /proc/<pid>/schedstat): on a CPU, and runnable but waiting for one. */
export interface SchedSample {
  readonly onCpuMs: number;
  readonly waitingMs: number;
}

/**
 * The main thread of process `pid` (the event loop's thread; `self` for this process), or
 * undefined where /proc has no schedstat (not Linux, or no CONFIG_SCHEDSTATS). Nanosecond counters,
 * unlike the 10 ms ticks of /proc/<pid>/stat: they tell a busy event loop from one that waited for
 * a core on a loaded machine.
 */
export function schedSample(pid: number | 'self'): SchedSample | undefined {
  try {
    const [onCpuNs, waitingNs] = readFileSync(`/proc/${pid}/schedstat`, 'utf8').trim().split(/\s+/).map(Number);
    return { onCpuMs: onCpuNs / 1e6, waitingMs: waitingNs / 1e6 };
  } catch {
    return undefined;
  }
}

/** What happened between two samples; undefined when either is missing. */
export function schedBetween(before: SchedSample | undefined, after: SchedSample | undefined): SchedSample | undefined {
  if (!before || !after) return undefined;
  return { onCpuMs: after.onCpuMs - before.onCpuMs, waitingMs: after.waitingMs - before.waitingMs };
}
