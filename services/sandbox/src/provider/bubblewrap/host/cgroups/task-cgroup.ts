import { readFile, readdir, writeFile } from 'node:fs/promises';

/** What a task's cgroup bounds: every process of the task together. */
export interface CgroupLimits {
  /** Memory of the task's processes and of its memory-backed folders (/tmp, /dev/shm), together. */
  readonly memoryBytes: number;
  /** Processes (and threads) of the task at once. */
  readonly maxProcesses: number;
}

/** Counters that only grow over the cgroup's life; a command's share is the difference. */
export interface CgroupCounters {
  /** Processes the kernel killed for going over the memory limit. */
  readonly oomKills: number;
  /** Forks refused at the process limit. */
  readonly processLimitHits: number;
}

/** One task's cgroup: its processes, whoever started them, are bounded together. */
export interface TaskCgroup {
  /** Moves a process into the cgroup; everything it starts afterwards is born there. */
  join(pid: number): Promise<void>;
  counters(): Promise<CgroupCounters>;
  /** Kills every process left in the cgroup (a daemon that left its process group included). */
  killAll(): Promise<void>;
}

/** The per-task cgroups of one cgroup version, under a parent the service owns. */
export interface TaskCgroups {
  /** Said at start-up: what is bounded, and how. */
  readonly description: string;
  /** The task's cgroup (made if missing) with its limits written. Named by the task's uid, unique on the host. */
  forTask(uid: number): Promise<TaskCgroup>;
  /** Kills what is left and removes the cgroup: the task's sandbox is gone. */
  remove(uid: number): Promise<void>;
  /** The uids that have a cgroup here (to sweep those whose workspace is gone). */
  uids(): Promise<number[]>;
}

/** How many rounds of kills it may take for a cgroup to empty (processes forking while being killed). */
const KILL_ROUNDS = 100;
const KILL_ROUND_PAUSE_MS = 10;

/**
 * SIGKILLs every process listed in `procsFile` until none is left. A process forking while the
 * list is read is caught in a later round; the bound keeps a pathological case from spinning.
 */
export async function killListed(procsFile: string): Promise<void> {
  for (let round = 0; round < KILL_ROUNDS; round++) {
    const pids = await listedPids(procsFile);
    if (pids.length === 0) return;
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone already
      }
    }
    await new Promise((resolve) => setTimeout(resolve, KILL_ROUND_PAUSE_MS));
  }
}

export async function listedPids(procsFile: string): Promise<number[]> {
  const text = await readFile(procsFile, 'utf8').catch(() => '');
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map(Number);
}

/** The number after `key` in a flat keyed file (memory.events, pids.events, memory.oom_control). */
export async function keyedCount(file: string, key: string): Promise<number> {
  const text = await readFile(file, 'utf8').catch(() => '');
  const line = text.split('\n').find((l) => l.startsWith(`${key} `));
  return line ? Number(line.slice(key.length + 1)) || 0 : 0;
}

/** Writes a control file; a file this kernel lacks (swap accounting off) is no error when `optional`. */
export async function writeControl(file: string, value: string, optional = false): Promise<void> {
  try {
    await writeFile(file, value);
  } catch (error) {
    if (optional && ['ENOENT', 'EACCES', 'EINVAL', 'EPERM'].includes((error as NodeJS.ErrnoException).code ?? '')) return;
    throw new Error(`could not write ${value.trim()} to ${file}: ${(error as Error).message}`, { cause: error });
  }
}

/** The uids named by the `u<uid>` cgroups in `dir`. */
export async function uidsIn(dir: string): Promise<number[]> {
  const names = await readdir(dir).catch(() => [] as string[]);
  return names.filter((name) => /^u\d+$/.test(name)).map((name) => Number(name.slice(1)));
}

/** A control file write that failed because the cgroup is not there (writeControl keeps the cause). */
export function isMissing(error: Error): boolean {
  return (error.cause as NodeJS.ErrnoException | undefined)?.code === 'ENOENT';
}
