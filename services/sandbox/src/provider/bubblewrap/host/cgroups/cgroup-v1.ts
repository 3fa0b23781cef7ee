import { mkdir, rmdir } from 'node:fs/promises';
import { pathExists } from '../path-exists';
import { join } from 'node:path';
import type { CgroupCounters, CgroupLimits, TaskCgroup, TaskCgroups } from './task-cgroup';
import { isMissing, keyedCount, killListed, uidsIn, writeControl } from './task-cgroup';

/** The v1 hierarchies a task's cgroup lives in; `cpu` only where the host mounts it. */
export interface V1Hierarchies {
  /** Each one's folder for the service's own tasks: <mount><the service's own cgroup>/<SANDBOX_CGROUP_NAME>. */
  readonly memory: string;
  readonly pids: string;
  readonly cpu?: string;
}

/** Every task the same CPU share (the kernel's default, written explicitly): one busy task cannot starve another. */
const CPU_SHARES = '1024';

/**
 * Per-task cgroups on a cgroup v1 host (memory and pids hierarchies, cpu when mounted), as on
 * hosts that delegate only v1. memory.limit_in_bytes counts the task's processes and the tmpfs
 * pages they write (/tmp, /dev/shm), and memsw the same with swap; the kernel's OOM killer acts
 * inside the cgroup, and the provider stops the whole command when it has.
 */
export class CgroupV1 implements TaskCgroups {
  readonly description: string;
  /** Made and limited once per task: a command only joins (each write costs, the memory limit most). */
  private readonly prepared = new Map<number, TaskCgroup>();

  constructor(
    private readonly dirs: V1Hierarchies,
    private readonly limits: CgroupLimits,
  ) {
    const cpu = dirs.cpu ? `, cpu.shares ${CPU_SHARES} each` : ' (no cpu hierarchy: no CPU weights)';
    this.description =
      `per-task cgroups (v1): memory.limit_in_bytes ${limits.memoryBytes} for all of a task's processes and its /tmp and /dev/shm, ` +
      `pids.max ${limits.maxProcesses}${cpu}, under ${dirs.memory} and ${dirs.pids}`;
  }

  async forTask(uid: number): Promise<TaskCgroup> {
    const known = this.prepared.get(uid);
    if (known) return known;
    const memory = join(this.dirs.memory, `u${uid}`);
    const pids = join(this.dirs.pids, `u${uid}`);
    const cpu = this.dirs.cpu ? join(this.dirs.cpu, `u${uid}`) : undefined;
    const prepare = async () => {
      await Promise.all([memory, pids, cpu].map((dir) => (dir ? mkdir(dir, { recursive: true }) : undefined)));
      await this.writeMemoryLimit(memory);
      await writeControl(join(pids, 'pids.max'), String(this.limits.maxProcesses));
      if (cpu) await writeControl(join(cpu, 'cpu.shares'), CPU_SHARES);
    };
    await prepare();
    const cgroup = new V1TaskCgroup(memory, pids, cpu, prepare);
    this.prepared.set(uid, cgroup);
    return cgroup;
  }

  uids(): Promise<number[]> {
    return uidsIn(this.dirs.pids);
  }

  async remove(uid: number): Promise<void> {
    this.prepared.delete(uid);
    const dirs = [this.dirs.pids, this.dirs.memory, this.dirs.cpu].flatMap((d) => (d ? [join(d, `u${uid}`)] : []));
    if (!(await pathExists(dirs[0]))) return;
    await killListed(join(dirs[0], 'cgroup.procs'));
    for (const dir of dirs) await rmdir(dir).catch(ignoreMissing);
  }

  /**
   * memsw (memory plus swap) may never be below the memory limit, so the order of the two writes
   * depends on whether the limit goes up or down; trying memory, memsw, memory covers both.
   */
  private async writeMemoryLimit(dir: string): Promise<void> {
    const bytes = String(this.limits.memoryBytes);
    const limit = join(dir, 'memory.limit_in_bytes');
    await writeControl(limit, bytes, true);
    await writeControl(join(dir, 'memory.memsw.limit_in_bytes'), bytes, true);
    await writeControl(limit, bytes);
  }
}

class V1TaskCgroup implements TaskCgroup {
  constructor(
    private readonly memory: string,
    private readonly pids: string,
    private readonly cpu: string | undefined,
    /** Makes the cgroup again (removed meanwhile by a sweep that found its workspace gone). */
    private readonly prepare: () => Promise<void>,
  ) {}

  async join(pid: number): Promise<void> {
    const enter = async () => {
      // pids first: from then on the process can no longer fork past the limit.
      for (const dir of [this.pids, this.memory, this.cpu]) if (dir) await writeControl(join(dir, 'cgroup.procs'), String(pid));
    };
    await enter().catch(async (error: Error) => {
      if (!isMissing(error)) throw error;
      await this.prepare();
      await enter();
    });
  }

  async counters(): Promise<CgroupCounters> {
    const [oomKills, processLimitHits] = await Promise.all([
      keyedCount(join(this.memory, 'memory.oom_control'), 'oom_kill'),
      keyedCount(join(this.pids, 'pids.events'), 'max'),
    ]);
    return { oomKills, processLimitHits };
  }

  killAll(): Promise<void> {
    return killListed(join(this.pids, 'cgroup.procs'));
  }
}

function ignoreMissing(error: NodeJS.ErrnoException): void {
  if (error.code !== 'ENOENT') throw error;
}
