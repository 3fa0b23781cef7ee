import { randomBytes } from 'node:crypto';
import { chmod, chown, mkdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { SandboxConfig } from '../sandbox.config';
import { ExecRequest, ExecResult, FileOwner, ProviderHealth, SandboxProvider } from '../sandbox-provider.port';
import { sandboxUserOf } from '../sandbox-user';
import { archiveDirectory, restoreDirectory } from '../workspace-archive';
import { runLimited } from '../process/run-limited';
import { WorkspaceDirs } from '../workspace-dirs';
import { BWRAP, bwrapArgv, sandboxEnv } from './bwrap-args';

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

  constructor(
    private readonly config: SandboxConfig,
    dataDir: string,
    private readonly etcDir = join(tmpdir(), `ats-sandbox-etc-${process.pid}`),
  ) {
    this.dirs = new WorkspaceDirs(dataDir);
  }

  async check(): Promise<ProviderHealth> {
    const exists = await stat(BWRAP).then(() => true, () => false);
    if (!exists) return { ok: false, reason: `${BWRAP} is missing (Debian package "bubblewrap")` };
    // A probe workspace of its own: instances sharing one volume check at the same time.
    const probeId = `task_${randomBytes(16).toString('hex')}`;
    try {
      await this.create(probeId);
      const result = await this.exec(probeId, { command: 'true', env: {}, timeoutMs: CHECK_TIMEOUT_MS });
      if (result.exitCode === 0) return { ok: true };
      return { ok: false, reason: `bwrap could not run a command: ${result.output.trim() || `exit ${result.exitCode}`}` };
    } finally {
      await this.destroy(probeId);
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
    const workspace = await this.create(taskId);
    const user = this.fileOwner(taskId);
    const { passwdFile, groupFile } = await this.identityFiles(user);
    const { launcherEnv, insideOnlyEnv } = sandboxEnv(request.env);
    const limits = this.config.limits;
    const argv = bwrapArgv({ workspace, user, limits, network: this.config.network, passwdFile, groupFile, command: request.command, insideOnlyEnv });
    const controller = new AbortController();
    const forward = () => controller.abort();
    request.signal?.addEventListener('abort', forward, { once: true });
    if (request.signal?.aborted) controller.abort();
    this.track(taskId, controller, true);
    try {
      const timeoutMs = Math.min(request.timeoutMs ?? limits.timeoutMs, limits.timeoutMs);
      return await runLimited({ argv, env: launcherEnv, cwd: '/', workspace, limits, timeoutMs, signal: controller.signal });
    } finally {
      this.track(taskId, controller, false);
      request.signal?.removeEventListener('abort', forward);
    }
  }

  snapshot(taskId: string, options: { maxBytes: number; timeoutMs: number }): Readable {
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

  /** /etc/passwd and /etc/group naming the sandbox user, so `whoami`, Python and others work. */
  private async identityFiles(user: FileOwner): Promise<{ passwdFile: string; groupFile: string }> {
    const dir = join(this.etcDir, String(user.uid));
    const passwdFile = join(dir, 'passwd');
    const groupFile = join(dir, 'group');
    if (!(await stat(groupFile).then(() => true, () => false))) {
      await mkdir(dir, { recursive: true, mode: 0o755 });
      await chmod(this.etcDir, 0o755);
      await writeFile(passwdFile, `root:x:0:0:root:/root:/usr/sbin/nologin\nsandbox:x:${user.uid}:${user.gid}:sandbox:/workspace:/bin/bash\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n`, { mode: 0o644 });
      await writeFile(groupFile, `root:x:0:\nsandbox:x:${user.gid}:\nnogroup:x:65534:\n`, { mode: 0o644 });
      await chown(dir, 0, 0).catch(() => undefined);
    }
    return { passwdFile, groupFile };
  }
}
