import { mkdir, rmdir } from 'node:fs/promises';
import { pathExists } from '../path-exists';
import { join } from 'node:path';
import type { CgroupCounters, CgroupLimits, TaskCgroup, TaskCgroups } from './task-cgroup';
import { isMissing, keyedCount, killListed, uidsIn, writeControl } from './task-cgroup';

/** cpu.weight's default: every task the same share. */
const CPU_WEIGHT = '100';

/**
 * Per-task cgroups on a cgroup v2 host, under a folder whose subtree has the memory, pids and
 * (where delegated) cpu controllers enabled (see detect-task-cgroups.ts). memory.max counts the
 * task's processes and its tmpfs pages, swap is refused (memory.swap.max 0, so swap is no way
 * around the bound), and memory.oom.group makes the kernel kill the whole task at once.
 */
export class CgroupV2 implements TaskCgroups {
  readonly description: string;
  /** Made and limited once per task: a command only joins. */
  private readonly prepared = new Map<number, TaskCgroup>();

  constructor(
    private readonly parent: string,
    private readonly limits: CgroupLimits,
    private readonly cpu: boolean,
  ) {
    this.description =
      `per-task cgroups (v2): memory.max ${limits.memoryBytes} for all of a task's processes and its /tmp and /dev/shm (no swap), ` +
      `pids.max ${limits.maxProcesses}${cpu ? `, cpu.weight ${CPU_WEIGHT} each` : ' (cpu controller not delegated: no CPU weights)'}, under ${parent}`;
  }

  async forTask(uid: number): Promise<TaskCgroup> {
    const known = this.prepared.get(uid);
    if (known) return known;
    const dir = join(this.parent, `u${uid}`);
    const prepare = async () => {
      await mkdir(dir, { recursive: true });
      await writeControl(join(dir, 'memory.max'), String(this.limits.memoryBytes));
      await writeControl(join(dir, 'memory.swap.max'), '0', true);
      await writeControl(join(dir, 'memory.oom.group'), '1', true);
      await writeControl(join(dir, 'pids.max'), String(this.limits.maxProcesses));
      if (this.cpu) await writeControl(join(dir, 'cpu.weight'), CPU_WEIGHT);
    };
    await prepare();
    const cgroup = new V2TaskCgroup(dir, prepare);
    this.prepared.set(uid, cgroup);
    return cgroup;
  }

  uids(): Promise<number[]> {
    return uidsIn(this.parent);
  }

  async remove(uid: number): Promise<void> {
    this.prepared.delete(uid);
    const dir = join(this.parent, `u${uid}`);
    if (!(await pathExists(dir))) return;
    await new V2TaskCgroup(dir, async () => undefined).killAll();
    await rmdir(dir).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'ENOENT') throw error;
    });
  }
}

class V2TaskCgroup implements TaskCgroup {
  constructor(
    private readonly dir: string,
    /** Makes the cgroup again (removed meanwhile by a sweep that found its workspace gone). */
    private readonly prepare: () => Promise<void>,
  ) {}

  async join(pid: number): Promise<void> {
    const procs = join(this.dir, 'cgroup.procs');
    await writeControl(procs, String(pid)).catch(async (error: Error) => {
      if (!isMissing(error)) throw error;
      await this.prepare();
      await writeControl(procs, String(pid));
    });
  }

  async counters(): Promise<CgroupCounters> {
    const [oomKills, processLimitHits] = await Promise.all([
      keyedCount(join(this.dir, 'memory.events'), 'oom_kill'),
      keyedCount(join(this.dir, 'pids.events'), 'max'),
    ]);
    return { oomKills, processLimitHits };
  }

  /** cgroup.kill (Linux 5.14) kills every process at once, forks in flight included; before it, one by one. */
  async killAll(): Promise<void> {
    await writeControl(join(this.dir, 'cgroup.kill'), '1', true);
    await killListed(join(this.dir, 'cgroup.procs'));
  }
}
