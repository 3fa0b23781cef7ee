import { randomBytes } from 'node:crypto';
import { lstat, mkdir, rename, rm } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import { PRLIMIT } from '../bubblewrap/bwrap-args';
import { assertSettable, UnsettableVariableError, unsettableResult } from '../process/settable-env';
import type { LimitedProcess } from '../process/run-limited';
import { runLimited } from '../process/run-limited';
import type { SandboxConfig } from '../sandbox.config';
import type { ExecRequest, ExecResult, FileOwner, ProviderHealth, SandboxProvider, SnapshotOptions } from '../sandbox-provider.port';
import { diskUsage } from '../process/disk-usage';
import type { RunTar } from '../workspace-archive';
import { archiveWorkspace, restoreWorkspace } from '../workspace-archive';
import { WorkspaceDirs } from './workspace-dirs';

/**
 * NO ISOLATION: commands run on the host as the service's own user, in the workspace, with a
 * clean environment and the same time, output and disk bounds. For machines without bubblewrap,
 * and only when SANDBOX_PROVIDER=unsafe-host says so explicitly.
 */
export class UnsafeHostProvider implements SandboxProvider {
  readonly name = 'unsafe-host';
  readonly unsafe = true;
  private readonly dirs: WorkspaceDirs;

  constructor(
    private readonly config: SandboxConfig,
    dataDir: string,
  ) {
    this.dirs = new WorkspaceDirs(dataDir);
  }

  async check(): Promise<ProviderHealth> {
    return { ok: true };
  }

  create(taskId: string): Promise<string> {
    return this.dirs.create(taskId);
  }

  workspacePath(taskId: string): string {
    return this.dirs.pathOf(taskId);
  }

  exists(taskId: string): Promise<boolean> {
    return this.dirs.exists(taskId);
  }

  fileOwner(): FileOwner | undefined {
    return undefined;
  }

  async exec(taskId: string, request: ExecRequest): Promise<ExecResult> {
    const workspace = await this.create(taskId);
    const limits = this.config.limits;
    const env = { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: workspace, LANG: 'C.UTF-8', ...request.env };
    try {
      assertSettable(env);
    } catch (error) {
      if (!(error instanceof UnsettableVariableError)) throw error;
      return unsettableResult(error);
    }
    const timeoutMs = Math.min(request.timeoutMs ?? limits.timeoutMs, limits.timeoutMs);
    // The same per-process limits as the sandbox; the process count only binds a non-root service user.
    const prlimit = [
      PRLIMIT,
      `--cpu=${limits.cpuSeconds}:${limits.cpuSeconds + 1}`,
      `--as=${limits.memoryBytes}`,
      `--fsize=${limits.diskQuotaBytes}`,
      '--core=0',
    ];
    if (process.getuid?.() !== 0) prlimit.push(`--nproc=${limits.maxProcesses}`);
    const argv = [...prlimit, '--', '/bin/bash', '-lc', request.command];
    return runLimited({ argv, env, cwd: workspace, limits, timeoutMs, signal: request.signal, ...this.quotaWatch(workspace) });
  }

  snapshot(taskId: string, options: SnapshotOptions): Readable {
    return archiveWorkspace(async () => {
      const root = await this.create(taskId);
      return { root, runTar: this.tarIn(root) };
    }, options);
  }

  /** Extracted into a fresh folder beside the workspace, then swapped in with renames: all or nothing. */
  async restore(taskId: string, archive: Readable, options: { maxBytes: number; timeoutMs: number }): Promise<void> {
    await this.dirs.prepareParents();
    const target = this.workspacePath(taskId);
    const scratch = `${target}.restoring-${randomBytes(4).toString('hex')}`;
    await mkdir(scratch, { mode: 0o700 });
    try {
      await restoreWorkspace(this.tarIn(scratch), archive, options);
      const hadTarget = await lstat(target).then(
        () => true,
        () => false,
      );
      if (hadTarget) await rename(target, `${scratch}.previous`);
      await rename(scratch, target);
      if (hadTarget) await rm(`${scratch}.previous`, { recursive: true, force: true });
    } catch (error) {
      await rm(scratch, { recursive: true, force: true });
      throw error;
    }
  }

  private tarIn(root: string): RunTar {
    const limits = this.config.limits;
    return (args, io) =>
      runLimited({
        argv: ['/usr/bin/tar', ...args],
        env: { PATH: '/usr/bin:/bin', LANG: 'C.UTF-8' },
        cwd: root,
        limits,
        ...io,
        ...this.quotaWatch(root),
      });
  }

  /** No filesystem of its own here: the workspace is measured while a command runs, and once it has ended. */
  private quotaWatch(root: string): Pick<LimitedProcess, 'watch' | 'facts'> {
    const quota = this.config.limits.diskQuotaBytes;
    return {
      watch: async () => ((await diskUsage(root, quota)) > quota ? 'disk' : undefined),
      facts: async () => ({ overQuota: (await diskUsage(root, quota)) >= quota }),
    };
  }

  async destroy(taskId: string): Promise<void> {
    await rm(this.workspacePath(taskId), { recursive: true, force: true });
  }
}
