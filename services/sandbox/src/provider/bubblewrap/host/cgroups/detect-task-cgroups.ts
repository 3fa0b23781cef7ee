import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { MountEntry } from '../mount-table';
import { readMountTable } from '../mount-table';
import { CgroupV1 } from './cgroup-v1';
import { CgroupV2 } from './cgroup-v2';
import type { CgroupLimits, TaskCgroups } from './task-cgroup';
import { listedPids, writeControl } from './task-cgroup';

/** The folder (below the service's own cgroup) that holds one cgroup per live task. */
const TASKS_FOLDER = 'ats-sandbox';
/** On cgroup v2, where the service moves itself so that its own cgroup may delegate controllers. */
const SERVICE_LEAF = 'ats-service';

export type CgroupDetection = { readonly cgroups: TaskCgroups } | { readonly cgroups?: undefined; readonly reason: string };

/**
 * The per-task cgroups this host lets the service make: v2 where the unified hierarchy has the
 * memory and pids controllers, else v1 where memory and pids hierarchies are mounted (as on
 * hosts that delegate only v1), else none, with the reason. They sit below the service's own
 * cgroup, so a container's or a systemd unit's limits still hold over every task together.
 */
export async function detectTaskCgroups(limits: CgroupLimits): Promise<CgroupDetection> {
  const mounts = await readMountTable();
  const own = parseProcCgroup(await readFile('/proc/self/cgroup', 'utf8'));
  const v2 = mounts.find((m) => m.fsType === 'cgroup2');
  if (v2 && own.unified !== undefined) {
    const controllers = (await readFile(join(v2.mountPoint, own.unified, 'cgroup.controllers'), 'utf8').catch(() => '')).split(/\s+/);
    if (controllers.includes('memory') && controllers.includes('pids'))
      return prepareV2(v2.mountPoint, own.unified, limits, controllers.includes('cpu'));
  }
  const v1 = (controller: string): string | undefined => {
    const mount = mounts.find((m: MountEntry) => m.fsType === 'cgroup' && m.superOptions.includes(controller));
    const path = own.v1.get(controller);
    return mount && path !== undefined ? join(mount.mountPoint, path, TASKS_FOLDER) : undefined;
  };
  const [memory, pids, cpu] = [v1('memory'), v1('pids'), v1('cpu')];
  if (memory && pids) {
    try {
      for (const dir of [memory, pids, cpu]) if (dir) await mkdir(dir, { recursive: true });
    } catch (error) {
      return {
        reason: `the v1 memory and pids hierarchies are there but the service cannot make cgroups in them: ${(error as Error).message}`,
      };
    }
    return { cgroups: new CgroupV1({ memory, pids, cpu }, limits) };
  }
  return { reason: 'no cgroup with the memory and pids controllers is delegated to the service (neither v2 nor v1)' };
}

/**
 * v2's rule that a cgroup with controllers enabled for its children holds no process of its own
 * means the service first moves itself into a leaf beside the tasks' folder (systemd's
 * Delegate=yes gives it such a cgroup). It does so only when it is alone in its cgroup.
 */
async function prepareV2(mount: string, ownPath: string, limits: CgroupLimits, cpu: boolean): Promise<CgroupDetection> {
  const own = join(mount, ownPath);
  const wanted = cpu ? '+memory +pids +cpu' : '+memory +pids';
  try {
    const enabled = (await readFile(join(own, 'cgroup.subtree_control'), 'utf8')).split(/\s+/);
    if (ownPath !== '/' && !(enabled.includes('memory') && enabled.includes('pids'))) {
      const others = (await listedPids(join(own, 'cgroup.procs'))).filter((pid) => pid !== process.pid);
      if (others.length > 0)
        return {
          reason: `the service's cgroup ${own} holds other processes (${others.slice(0, 5).join(', ')}), so it cannot delegate the memory and pids controllers; run the service in a cgroup of its own (systemd: Delegate=yes)`,
        };
      await mkdir(join(own, SERVICE_LEAF), { recursive: true });
      await writeControl(join(own, SERVICE_LEAF, 'cgroup.procs'), String(process.pid));
    }
    await writeControl(join(own, 'cgroup.subtree_control'), wanted);
    const parent = join(own, TASKS_FOLDER);
    await mkdir(parent, { recursive: true });
    await writeControl(join(parent, 'cgroup.subtree_control'), wanted);
    return { cgroups: new CgroupV2(parent, limits, cpu) };
  } catch (error) {
    return { reason: `cgroup v2 at ${own} could not be prepared for per-task cgroups: ${(error as Error).message}` };
  }
}

/** /proc/self/cgroup: "0::/path" for v2, "N:controller[,controller]:/path" for each v1 hierarchy. */
export function parseProcCgroup(text: string): { unified?: string; v1: Map<string, string> } {
  const v1 = new Map<string, string>();
  let unified: string | undefined;
  for (const line of text.split('\n')) {
    const match = /^\d+:([^:]*):(.*)$/.exec(line);
    if (!match) continue;
    const [, controllers, path] = match;
    if (controllers === '') unified = path;
    else for (const controller of controllers.split(',')) v1.set(controller, path);
  }
  return { unified, v1 };
}
