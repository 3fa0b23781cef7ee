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

/** Every thread of process `pid` by thread id: its name (/proc/<pid>/task/<tid>/comm) and counters. */
export function threadSchedSamples(pid: number): Map<string, { name: string; sample: SchedSample }> {
  const threads = new Map<string, { name: string; sample: SchedSample }>();
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      const sample = readSchedstat(`/proc/${pid}/task/${tid}/schedstat`);
      if (!sample) continue;
      const name = readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim();
      threads.set(tid, { name, sample });
    }
  } catch {
    // The process ended: what was read so far.
  }
  return threads;
}

/**
 * On-CPU time of each thread between two samples of threadSchedSamples, busiest first. Node names
 * every thread of a process alike (`node`), so each is labelled `<name>#<tid>`, except the first
 * (its event loop), `main`; threads started later have higher ids.
 */
export function threadsBetween(
  pid: number,
  before: Map<string, { name: string; sample: SchedSample }>,
  after: Map<string, { name: string; sample: SchedSample }>,
): { name: string; onCpuMs: number }[] {
  const byName = new Map<string, number>();
  for (const [tid, { name, sample }] of after) {
    const label = tid === String(pid) ? 'main' : `${name}#${tid}`;
    const earlier = before.get(tid)?.sample.onCpuMs ?? 0;
    byName.set(label, (byName.get(label) ?? 0) + sample.onCpuMs - earlier);
  }
  return [...byName].map(([name, onCpuMs]) => ({ name, onCpuMs })).sort((a, b) => b.onCpuMs - a.onCpuMs);
}
