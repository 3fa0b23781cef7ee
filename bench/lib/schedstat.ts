import { readdirSync, readFileSync } from 'node:fs';

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
  return readSchedstat(`/proc/${pid}/schedstat`);
}

/**
 * Every thread of process `pid` summed (its event loop, worker threads, V8's compiler and GC
 * helpers, libuv's pool): what the process as a whole took from the machine's cores. Threads that
 * ended between two samples drop out of the sum; the benchmarks sample processes whose threads live on.
 */
export function processSchedSample(pid: number | 'self'): SchedSample | undefined {
  try {
    let onCpuMs = 0;
    let waitingMs = 0;
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      const sample = readSchedstat(`/proc/${pid}/task/${tid}/schedstat`);
      if (!sample) continue;
      onCpuMs += sample.onCpuMs;
      waitingMs += sample.waitingMs;
    }
    return { onCpuMs, waitingMs };
  } catch {
    return undefined;
  }
}

/** What happened between two samples; undefined when either is missing. */
export function schedBetween(before: SchedSample | undefined, after: SchedSample | undefined): SchedSample | undefined {
  if (!before || !after) return undefined;
  return { onCpuMs: after.onCpuMs - before.onCpuMs, waitingMs: after.waitingMs - before.waitingMs };
}

function readSchedstat(path: string): SchedSample | undefined {
  try {
    const [onCpuNs, waitingNs] = readFileSync(path, 'utf8').trim().split(/\s+/).map(Number);
    return { onCpuMs: onCpuNs / 1e6, waitingMs: waitingNs / 1e6 };
  } catch {
    return undefined;
  }
}
