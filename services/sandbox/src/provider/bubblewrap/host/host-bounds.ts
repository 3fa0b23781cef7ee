import type { ChangeHints } from '../../../workspace/checkpoints/change-hints';
import type { SandboxConfig } from '../../sandbox.config';
import type { TaskCgroups } from './cgroups/task-cgroup';
import { detectTaskCgroups } from './cgroups/detect-task-cgroups';
import { TaskUids } from './task-uids';
import type { VolumeKind } from './workspace-volumes';
import { WorkspaceVolumes } from './workspace-volumes';
import { join } from 'node:path';

/** What this host bounds for every task as a whole, found once at start-up. */
export interface HostBoundsSetup {
  readonly volumes: WorkspaceVolumes;
  readonly uids: TaskUids;
  /** Absent: no cgroup delegated (or SANDBOX_CGROUPS=off); rlimits per process stand in. */
  readonly cgroups?: TaskCgroups;
  /** One line per bound, how it is enforced (said at start-up). */
  readonly enforced: string[];
  /** What is weaker here than it should be, and why (said at start-up as warnings). */
  readonly warnings: string[];
}

/**
 * Finds what the host lets the sandbox enforce per task — a filesystem per workspace (loop
 * devices), a cgroup per task (v2, or v1 memory + pids) — and says, for each bound, how it is
 * enforced and what falls back to a weaker means where the host does not allow the strong one.
 */
export async function setUpHostBounds(config: SandboxConfig, dataDir: string, hints?: ChangeHints): Promise<HostBoundsSetup> {
  const { limits } = config;
  const enforced: string[] = [];
  const warnings: string[] = [];

  const noFilesystem = config.workspaceFs === 'folder' ? 'SANDBOX_WORKSPACE_FS=folder' : await WorkspaceVolumes.filesystemUnavailable();
  const kind: VolumeKind = noFilesystem ? 'folder' : 'filesystem';
  const uids = new TaskUids(join(config.runtimeDir, 'uids'), config.uidBase, config.uidCount);
  const volumes = new WorkspaceVolumes({ dataDir, runtimeDir: config.runtimeDir, quotaBytes: limits.diskQuotaBytes }, uids, kind, hints);
  if (kind === 'filesystem') {
    enforced.push(
      `disk: each workspace is an ext4 filesystem of ${limits.diskQuotaBytes} bytes (SANDBOX_DISK_QUOTA_BYTES) on a loop device: a write past it fails with ENOSPC`,
    );
  } else {
    warnings.push(
      `disk: no filesystem per workspace (${noFilesystem}): the quota of ${limits.diskQuotaBytes} bytes is enforced by a watcher every 250 ms and RLIMIT_FSIZE per file; what is written between two measurements can pass it; ` +
        "and with no filesystem of its own to watch for changes, each step's checkpoint walks the whole workspace",
    );
  }

  const detected = config.cgroups === 'off' ? { reason: 'SANDBOX_CGROUPS=off' } : await detectTaskCgroups(limits);
  if (detected.cgroups) {
    enforced.push(`memory, processes, CPU share: ${detected.cgroups.description}`);
  } else {
    warnings.push(
      `memory and processes: no per-task cgroup (${detected.reason}): memory falls back to RLIMIT_AS of ${limits.memoryBytes} bytes per process ` +
        `(several processes, and /tmp and /dev/shm, add up past it), processes to RLIMIT_NPROC ${limits.maxProcesses} of the task's own uid, and no CPU weights between tasks`,
    );
  }
  enforced.push(
    `privilege: every sandboxed process runs as the task's own host uid (one per live workspace, from ${config.uidBase}, unique on this host), in a user namespace with no capability; ` +
      `CPU ${limits.cpuSeconds} s per process (RLIMIT_CPU), wall clock ${limits.timeoutMs} ms per command`,
  );
  return { volumes, uids, cgroups: detected.cgroups, enforced, warnings };
}

/**
 * What crashed instances, and DATA_DIRs deleted under running ones, left on the host: mounts of
 * workspaces that no longer exist, and cgroups of uids no live workspace holds. Run at start-up.
 */
export async function sweepHostLeftovers(setup: HostBoundsSetup): Promise<void> {
  await setup.volumes.sweepStale();
  if (!setup.cgroups) return;
  for (const uid of await setup.cgroups.uids()) if (!(await setup.uids.isLive(uid))) await setup.cgroups.remove(uid);
}
