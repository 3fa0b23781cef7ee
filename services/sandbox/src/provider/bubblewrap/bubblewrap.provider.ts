import { randomBytes } from 'node:crypto';
import { chmod, rm, stat } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { SandboxConfig } from '../sandbox.config';
import { ExecRequest, ExecResult, FileOwner, ProviderHealth, SandboxProvider, SnapshotOptions } from '../sandbox-provider.port';
import { sandboxUserOf } from '../sandbox-user';
import { archiveDirectory, restoreDirectory } from '../workspace-archive';
import { runLimited } from '../process/run-limited';
import { WorkspaceDirs } from '../workspace-dirs';
import { UnsettableVariableError, unsettableResult } from '../process/settable-env';
import { BWRAP, bwrapLaunch, sandboxEnv } from './bwrap-args';
import { seccompProgram } from './seccomp/seccomp-filter';

const CHECK_TIMEOUT_MS = 10_000;

/**
 * The default provider on Linux: every command runs under bubblewrap as the task's own
 * unprivileged uid, with fresh namespaces, the system read-only, the workspace the only writable
 * host path, network off unless configured, and prlimit's per-command limits.
 */
export class BubblewrapProvider implements SandboxProvider {
  readonly name = 'bubblewrap';
  readonly unsafe = false;
  private readonly dirs: WorkspaceDirs;
  private readonly running = new Map<string, Set<AbortController>>();

  /** Undefined on an architecture we have no syscall table for; check() says so. */
  private readonly seccomp = seccompProgram();

  constructor(
    private readonly config: SandboxConfig,
    dataDir: string,
  ) {
    this.dirs = new WorkspaceDirs(dataDir);
  }

  /** Runs `true` through the real launch path, and says exactly what stops it when it fails. */
  async check(): Promise<ProviderHealth> {
    const exists = await stat(BWRAP).then(
      () => true,
      () => false,
    );
    if (!exists) return { ok: false, reason: `${BWRAP} is missing (Debian package "bubblewrap")` };
    const uid = process.getuid?.();
    if (uid !== 0)
      return {
        ok: false,
        reason: `the service runs as uid ${uid}: it must run as root to start each task's commands as that task's own unprivileged uid`,
      };
    const warnings = this.seccomp
      ? []
      : [`no seccomp filter on this architecture (${process.arch}): nested user namespaces, mount, ptrace and the rest are not refused`];
    // A probe workspace of its own: instances sharing one volume check at the same time.
    const probeId = `task_${randomBytes(16).toString('hex')}`;
    try {
      await this.create(probeId);
      const result = await this.exec(probeId, { command: 'true', env: {}, timeoutMs: CHECK_TIMEOUT_MS });
      if (result.exitCode === 0) return { ok: true, warnings };
      return { ok: false, reason: `bwrap could not run a command: ${result.output.trim() || `exit ${result.exitCode}`}` };
    } catch (error) {
      return {
        ok: false,
        reason: `the probe workspace under DATA_DIR could not be prepared: ${error instanceof Error ? error.message : String(error)}`,
      };
    } finally {
      await this.destroy(probeId).catch(() => undefined);
    }
  }

  async create(taskId: string): Promise<string> {
    return this.dirs.create(taskId, this.fileOwner(taskId));
  }

  workspacePath(taskId: string): string {
    return this.dirs.pathOf(taskId);
  }

  exists(taskId: string): Promise<boolean> {
    return this.dirs.exists(taskId);
  }

  fileOwner(taskId: string): FileOwner {
    return sandboxUserOf(taskId, this.config.uidBase, this.config.uidCount);
  }

  async exec(taskId: string, request: ExecRequest): Promise<ExecResult> {
    const workspaceRoot = await this.create(taskId);
    let env: ReturnType<typeof sandboxEnv>;
    try {
      env = sandboxEnv(request.env);
    } catch (error) {
      if (!(error instanceof UnsettableVariableError)) throw error;
      return unsettableResult(error);
    }
    const limits = this.config.limits;
    const launch = bwrapLaunch({
      workspace: workspaceRoot,
      user: this.fileOwner(taskId),
      limits,
      network: this.config.network,
      command: request.command,
      insideOnlyEnv: env.insideOnlyEnv,
      seccomp: this.seccomp,
    });
    const controller = new AbortController();
    const forward = () => controller.abort();
    request.signal?.addEventListener('abort', forward, { once: true });
    if (request.signal?.aborted) controller.abort();
    this.track(taskId, controller, true);
    try {
      const timeoutMs = Math.min(request.timeoutMs ?? limits.timeoutMs, limits.timeoutMs);
      return await runLimited({
        argv: launch.argv,
        env: env.launcherEnv,
        cwd: '/',
        workspace: workspaceRoot,
        limits,
        timeoutMs,
        signal: controller.signal,
        extraFds: launch.fds,
      });
    } finally {
      this.track(taskId, controller, false);
      request.signal?.removeEventListener('abort', forward);
    }
  }

  snapshot(taskId: string, options: SnapshotOptions): Readable {
    return archiveDirectory(this.workspacePath(taskId), options);
  }

  async restore(taskId: string, archive: Readable, options: { maxBytes: number; timeoutMs: number }): Promise<void> {
    await this.dirs.prepareParents();
    await restoreDirectory(this.workspacePath(taskId), archive, options, this.fileOwner(taskId));
    await chmod(this.workspacePath(taskId), 0o700);
  }

  async destroy(taskId: string): Promise<void> {
    for (const controller of this.running.get(taskId) ?? []) controller.abort();
    await rm(this.workspacePath(taskId), { recursive: true, force: true });
  }

  private track(taskId: string, controller: AbortController, add: boolean): void {
    const set = this.running.get(taskId) ?? new Set<AbortController>();
    if (add) set.add(controller);
    else set.delete(controller);
    if (set.size > 0) this.running.set(taskId, set);
    else this.running.delete(taskId);
  }
}
