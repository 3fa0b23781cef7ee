import { randomBytes } from 'node:crypto';
import { statfs } from 'node:fs/promises';
import type { Readable, Writable } from 'node:stream';
import type { SandboxConfig } from '../sandbox.config';
import type { ExecRequest, ExecResult, FileOwner, ProviderHealth, SandboxProvider, SnapshotOptions } from '../sandbox-provider.port';
import type { RunTar } from '../workspace-archive';
import { archiveWorkspace, restoreWorkspace } from '../workspace-archive';
import { diskUsage } from '../process/disk-usage';
import type { HostFacts } from '../process/run-limited';
import { runLimited, spawnLimited } from '../process/run-limited';
import { UnsettableVariableError, unsettableResult } from '../process/settable-env';
import type { BwrapLaunch } from './bwrap-args';
import { BWRAP, LAUNCHER_ENV, SHELL_ARGV, bwrapLaunch, sandboxEnv, shellEnv } from './bwrap-args';
import { WarmLaunchers, killGroup } from './warm-launchers';
import { EgressProxy } from '../../egress/egress-proxy';
import { proxyEnv } from '../../egress/sandbox-forwarder';
import type { CgroupCounters } from './host/cgroups/task-cgroup';
import type { HostBoundsSetup } from './host/host-bounds';
import { setUpHostBounds, sweepHostLeftovers } from './host/host-bounds';
import type { ChangeHints } from '../../workspace/checkpoints/change-hints';
import { NO_CHANGE_HINTS } from '../../workspace/checkpoints/change-hints';
import type { Volume } from './host/workspace-volumes';
import { workspaceMountPoint } from './host/workspace-volumes';
import { seccompProgram } from './seccomp/seccomp-filter';

const CHECK_TIMEOUT_MS = 10_000;
const TAR = '/usr/bin/tar';
/** A filesystem with less room than this left is full for a write that failed with ENOSPC. */
const FULL_BELOW_BYTES = 1024 * 1024;

/** One process to run in a task's sandbox. */
interface SandboxJob {
  /** A `shell` call: SHELL_ARGV, run by a launcher started ahead where one waits. */
  readonly shell?: boolean;
  /** The egress proxy's socket for this command (SANDBOX_NETWORK=egress). */
  readonly egressSocket?: string;
  readonly argv: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  readonly timeoutMs: number;
  readonly signal?: AbortSignal;
  readonly stdin?: Readable;
  readonly stdout?: Writable;
}

/**
 * The default provider on Linux: every process of a task runs under bubblewrap as the task's own
 * unprivileged host uid, in a user namespace with fresh PID, IPC, UTS, cgroup, mount and network
 * namespaces, the system read-only, the workspace (a filesystem of its own, as big as the quota)
 * the only writable host storage, in the task's cgroup (memory, processes, CPU share), network
 * off unless configured. Snapshots and restores run tar the same way, as the task.
 */
export class BubblewrapProvider implements SandboxProvider {
  readonly name = 'bubblewrap';
  readonly unsafe = false;
  private readonly running = new Map<string, Set<AbortController>>();
  /** The uid each mounted workspace belongs to (what fileOwner answers without a system call). */
  private readonly owners = new Map<string, FileOwner>();
  /** Each task cgroup's counters when its last command ended: nothing of the task runs between commands, so they still hold. */
  private readonly lastCounters = new Map<number, CgroupCounters>();
  private host?: Promise<HostBoundsSetup>;
  private readonly warm = new WarmLaunchers();
  private readonly egress: EgressProxy;

  /** Undefined on an architecture we have no syscall table for; check() says so. */
  private readonly seccomp = seccompProgram();

  constructor(
    private readonly config: SandboxConfig,
    private readonly dataDir: string,
    /** Told when a task's filesystem is mounted and before it is unmounted (the checkpoints' change detector). */
    private readonly hints: ChangeHints = NO_CHANGE_HINTS,
  ) {
    this.egress = new EgressProxy(config.egress, config.runtimeDir);
  }

  /** Runs `true` through the real launch path, and says exactly what stops it when it fails. */
  async check(): Promise<ProviderHealth> {
    const uid = process.getuid?.();
    if (uid !== 0)
      return {
        ok: false,
        reason: `the service runs as uid ${uid}: it must run as root to give each task its own uid, workspace filesystem and cgroup`,
      };
    let host: HostBoundsSetup;
    try {
      host = await this.hostBounds();
      await sweepHostLeftovers(host);
    } catch (error) {
      return { ok: false, reason: `the host's bounds could not be set up: ${messageOf(error)}` };
    }
    const warnings = [...host.warnings];
    if (!this.seccomp)
      warnings.push(
        `no seccomp filter on this architecture (${process.arch}): nested user namespaces, mount, ptrace and the rest are not refused`,
      );
    // A probe workspace of its own: instances sharing one volume check at the same time.
    const probeId = `task_${randomBytes(16).toString('hex')}`;
    try {
      await this.create(probeId);
      const result = await this.exec(probeId, { command: 'true', env: {}, timeoutMs: CHECK_TIMEOUT_MS });
      if (result.exitCode === 0) return { ok: true, warnings, enforced: host.enforced };
      const missing = result.output.includes(BWRAP) ? ` (${BWRAP}: Debian package "bubblewrap")` : '';
      return { ok: false, reason: `bwrap could not run a command${missing}: ${result.output.trim() || `exit ${result.exitCode}`}` };
    } catch (error) {
      return { ok: false, reason: `the probe workspace under DATA_DIR could not be prepared: ${messageOf(error)}` };
    } finally {
      await this.destroy(probeId).catch(() => undefined);
    }
  }

  async create(taskId: string): Promise<string> {
    return (await this.open(taskId)).path;
  }

  workspacePath(taskId: string): string {
    return workspaceMountPoint({ dataDir: this.dataDir, runtimeDir: this.config.runtimeDir }, taskId);
  }

  async exists(taskId: string): Promise<boolean> {
    return (await this.hostBounds()).volumes.exists(taskId);
  }

  fileOwner(taskId: string): FileOwner {
    const owner = this.owners.get(taskId);
    // Never a guess: a file written for the wrong uid would be another task's, or the task's no more.
    if (!owner) throw new Error(`the workspace of ${taskId} is not mounted here: its owner is not known`);
    return owner;
  }

  async exec(taskId: string, request: ExecRequest): Promise<ExecResult> {
    const volume = await this.open(taskId);
    let env: Record<string, string>;
    try {
      env = sandboxEnv(request.env);
    } catch (error) {
      if (!(error instanceof UnsettableVariableError)) throw error;
      return unsettableResult(error);
    }
    const limits = this.config.limits;
    const timeoutMs = Math.min(request.timeoutMs ?? limits.timeoutMs, limits.timeoutMs);
    const job = { shell: true, argv: SHELL_ARGV, env: shellEnv(request.command, env), timeoutMs, signal: request.signal };
    if (this.config.network !== 'egress') return this.run(taskId, volume, job);
    // The proxy variables first: a task's own value of one of them wins.
    const session = await this.egress.start(taskId, volume.owner, request.egressAllow);
    let result: ExecResult | undefined;
    try {
      result = await this.run(taskId, volume, { ...job, env: { ...proxyEnv(), ...job.env }, egressSocket: session.socketPath });
    } finally {
      const { records, unrecorded } = await session.close();
      if (result) result = { ...result, egress: records, ...(unrecorded > 0 ? { egressUnrecorded: unrecorded } : {}) };
    }
    return result;
  }

  snapshot(taskId: string, options: SnapshotOptions): Readable {
    return archiveWorkspace(async () => {
      const volume = await this.open(taskId);
      return { root: volume.path, runTar: this.tarIn(taskId, volume) };
    }, options);
  }

  /** Fills a fresh workspace from an archive; it takes the task's workspace's place only once tar succeeded. */
  async restore(taskId: string, archive: Readable, options: { maxBytes: number; timeoutMs: number }): Promise<void> {
    const { volumes } = await this.hostBounds();
    const scratch = await volumes.openScratch(taskId);
    try {
      await restoreWorkspace(this.tarIn(taskId, scratch), archive, options);
    } catch (error) {
      await volumes.dropScratch(taskId);
      throw error;
    }
    await volumes.commitScratch(taskId);
    this.owners.delete(taskId); // opened afresh: its next shell launcher is started ahead
    await this.open(taskId);
  }

  async destroy(taskId: string): Promise<void> {
    for (const controller of this.running.get(taskId) ?? []) controller.abort();
    const host = await this.hostBounds();
    const owner = this.owners.get(taskId);
    this.owners.delete(taskId);
    if (owner) await this.warm.discard(owner.uid);
    if (owner) this.lastCounters.delete(owner.uid);
    if (owner && host.cgroups) await host.cgroups.remove(owner.uid);
    await host.volumes.destroy(taskId);
  }

  async close(): Promise<void> {
    await this.warm.discardAll();
  }

  private async open(taskId: string): Promise<Volume> {
    const host = await this.hostBounds();
    const volume = await host.volumes.open(taskId);
    const fresh = this.owners.get(taskId)?.uid !== volume.owner.uid;
    this.owners.set(taskId, volume.owner);
    if (fresh) this.prepareLauncher(taskId, volume, host);
    return volume;
  }

  /**
   * Starts the task's next shell launcher (see WarmLaunchers) in the background: the same argv
   * and descriptors a command's launch has, placed in the task's cgroup. One whose workspace went
   * away meanwhile is killed at once.
   */
  private prepareLauncher(taskId: string, volume: Volume, host: HostBoundsSetup): void {
    const uid = volume.owner.uid;
    const current = () => this.owners.get(taskId)?.uid === uid;
    if (!current()) return;
    this.warm.prepare(uid, async () => {
      const cgroup = host.cgroups ? await host.cgroups.forTask(uid) : undefined;
      const launch = this.launchOf(volume, { shell: true, argv: SHELL_ARGV, env: {}, timeoutMs: 0 }, cgroup !== undefined, host);
      const child = spawnLimited({ argv: launch.argv, env: LAUNCHER_ENV, cwd: '/', user: volume.owner, extraFds: launch.fds });
      child.on('error', () => undefined);
      try {
        if (child.pid === undefined) throw new Error('the launcher did not start');
        await cgroup?.join(child.pid);
        if (!current()) throw new Error('the workspace went away');
        return child;
      } catch {
        if (child.pid) killGroup(child.pid);
        return undefined;
      }
    });
  }

  private launchOf(volume: Volume, job: SandboxJob, cgroup: boolean, host: HostBoundsSetup): BwrapLaunch {
    return bwrapLaunch({
      workspace: volume.path,
      user: volume.owner,
      limits: this.config.limits,
      bounds: { cgroup, filesystem: host.volumes.kind === 'filesystem' },
      ...(this.config.network === 'egress' && job.shell ? { egress: { socketPath: job.egressSocket } } : {}),
      argv: job.argv,
      env: job.env,
      seccomp: this.seccomp,
    });
  }

  /** tar, run as the task in a sandbox on `volume`, with nothing of the task's env or secrets. */
  private tarIn(taskId: string, volume: Volume): RunTar {
    return (args, io) => this.run(taskId, volume, { argv: [TAR, ...args], env: sandboxEnv({}), ...io });
  }

  /**
   * Runs one process in the task's sandbox: the service forks and drops to the task's uid, the
   * process joins the task's cgroup before bwrap has read its options (so before it has started
   * anything), and the command is stopped when the cgroup saw the kernel kill for memory.
   */
  private async run(taskId: string, volume: Volume, job: SandboxJob): Promise<ExecResult> {
    const host = await this.hostBounds();
    const filesystem = host.volumes.kind === 'filesystem';
    const limits = this.config.limits;
    const cgroup = host.cgroups ? await host.cgroups.forTask(volume.owner.uid) : undefined;
    const uid = volume.owner.uid;
    const before = this.lastCounters.get(uid) ?? (await cgroup?.counters()) ?? { oomKills: 0, processLimitHits: 0 };
    const launch = this.launchOf(volume, job, cgroup !== undefined, host);
    // Started ahead, already in the cgroup: it only waits for its options.
    const warm = job.shell ? await this.warm.take(uid) : undefined;
    const controller = new AbortController();
    const forward = () => controller.abort();
    job.signal?.addEventListener('abort', forward, { once: true });
    if (job.signal?.aborted) controller.abort();
    this.track(taskId, controller, true);
    try {
      return await runLimited(
        {
          argv: launch.argv,
          env: LAUNCHER_ENV,
          cwd: '/',
          user: volume.owner,
          limits,
          timeoutMs: job.timeoutMs,
          signal: controller.signal,
          extraFds: launch.fds,
          stdin: job.stdin,
          stdout: job.stdout,
          beforeStart: cgroup && !warm ? (pid) => cgroup.join(pid) : undefined,
          watch: async () => {
            if (cgroup && (await cgroup.counters()).oomKills > before.oomKills) return 'memory';
            if (!filesystem && (await diskUsage(volume.path, limits.diskQuotaBytes)) > limits.diskQuotaBytes) return 'disk';
            return undefined;
          },
          facts: async (): Promise<HostFacts> => {
            const after = (await cgroup?.counters()) ?? before;
            if (cgroup) this.lastCounters.set(uid, after);
            return {
              oomKills: after.oomKills - before.oomKills,
              processLimitHits: after.processLimitHits - before.processLimitHits,
              boundsPerTask: cgroup !== undefined,
              ...(filesystem
                ? { workspaceFull: await isFull(volume.path) }
                : { overQuota: (await diskUsage(volume.path, limits.diskQuotaBytes)) >= limits.diskQuotaBytes }),
            };
          },
          afterExit: cgroup ? () => cgroup.killAll() : undefined,
        },
        warm,
      );
    } finally {
      this.track(taskId, controller, false);
      job.signal?.removeEventListener('abort', forward);
      if (job.shell) this.prepareLauncher(taskId, volume, host);
    }
  }

  private hostBounds(): Promise<HostBoundsSetup> {
    this.host ??= setUpHostBounds(this.config, this.dataDir, this.hints);
    this.host.catch(() => (this.host = undefined));
    return this.host;
  }

  private track(taskId: string, controller: AbortController, add: boolean): void {
    const set = this.running.get(taskId) ?? new Set<AbortController>();
    if (add) set.add(controller);
    else set.delete(controller);
    if (set.size > 0) this.running.set(taskId, set);
    else this.running.delete(taskId);
  }
}

/** A workspace filesystem with no room or no inode left. */
async function isFull(path: string): Promise<boolean> {
  const fs = await statfs(path).catch(() => undefined);
  return fs !== undefined && (fs.bavail * fs.bsize < FULL_BELOW_BYTES || fs.ffree === 0);
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
