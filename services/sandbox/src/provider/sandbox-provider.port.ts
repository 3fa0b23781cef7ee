import type { Readable } from 'node:stream';
import type { EgressRecord } from '@app/contracts';
import type { OnSkipped } from '../workspace/snapshot-entries';

/**
 * The sandbox provider port: where a task's untrusted commands run. The sandbox service owns it;
 * adapters (bubblewrap, unsafe-host) live next to this file and pass `testing/sandbox-provider.contract.ts`.
 *
 * A sandbox is a task's workspace plus the isolation around the processes started in it. The
 * workspace is reachable on the host (behind DATA_DIR/workspaces/<taskId>: a folder, or the
 * image of a filesystem of its own) so host-side file tools, snapshots and artifact scans can
 * read it; commands only ever see it mounted at `/workspace`.
 */
export const SANDBOX_PROVIDER = Symbol('SANDBOX_PROVIDER');

/** Which limit stopped a command. Each is reported in the tool result, never a hang or a crash. */
export type LimitHit = 'timeout' | 'cpu' | 'memory' | 'processes' | 'output' | 'disk';

export interface SandboxLimits {
  /** Wall clock per command; on expiry the whole process tree is killed. */
  readonly timeoutMs: number;
  /** CPU seconds per process (RLIMIT_CPU). */
  readonly cpuSeconds: number;
  /** Memory of the task's processes and memory-backed folders together (a cgroup; RLIMIT_AS per process where none is delegated). */
  readonly memoryBytes: number;
  /** Processes of the task at once (a cgroup's pids.max; RLIMIT_NPROC of its uid where none is delegated): stops fork bombs. */
  readonly maxProcesses: number;
  /** Output bytes kept (stdout and stderr together); the rest is dropped and marked. */
  readonly maxOutputBytes: number;
  /** Bytes the whole workspace may hold (its own filesystem of that size; a watcher where the host has none). */
  readonly diskQuotaBytes: number;
}

export interface ExecRequest {
  /** Run with `bash -lc` in the workspace. */
  readonly command: string;
  /** Environment variables of the command (the task's env and secrets); nothing else of the host leaks in. */
  readonly env: Readonly<Record<string, string>>;
  /** Shorter than the configured limit if the caller asks; never longer. */
  readonly timeoutMs?: number;
  /** Fires to kill the command (task cancelled). */
  readonly signal?: AbortSignal;
  /** With SANDBOX_NETWORK=egress: the task's `network.allow` (absent: SANDBOX_EGRESS_ALLOW). */
  readonly egressAllow?: readonly string[];
}

export interface ExecResult {
  /** The exit code, or null when a signal ended the command. */
  readonly exitCode: number | null;
  /** stdout and stderr interleaved as they arrived, truncated at maxOutputBytes. */
  readonly output: string;
  /** True when output was cut at maxOutputBytes. */
  readonly truncated: boolean;
  readonly durationMs: number;
  /** The limit that stopped (or truncated) the command, if any. */
  readonly limitHit?: LimitHit;
  /** Human-readable explanation of limitHit, e.g. "killed after 5000 ms (timeout)". */
  readonly limitMessage?: string;
  /** The command was killed because `signal` fired. */
  readonly cancelled?: boolean;
  /** With SANDBOX_NETWORK=egress: every connection the command's egress proxy handled. */
  readonly egress?: readonly EgressRecord[];
  /** Connections past the number recorded per command (bounded, not each an event). */
  readonly egressUnrecorded?: number;
}

export interface ProviderHealth {
  readonly ok: boolean;
  /** Why not, for the start-up log and the refusal message. */
  readonly reason?: string;
  /** What works less well than it should here (logged at start-up). */
  readonly warnings?: readonly string[];
  /** What is enforced and how, one line per bound (logged at start-up). */
  readonly enforced?: readonly string[];
}

/** Who owns files in a workspace, so host-side writers (file tools, extraction, restore) can match it. */
export interface FileOwner {
  readonly uid: number;
  readonly gid: number;
}

export interface ArchiveBounds {
  readonly maxBytes: number;
  readonly timeoutMs: number;
}

export interface SnapshotOptions extends ArchiveBounds {
  /** Fires to stop the snapshot at once (the task needs its sandbox again). */
  readonly signal?: AbortSignal;
  /** Told about every entry left out (FIFOs, sockets, devices, names that are not UTF-8, …). */
  readonly onSkipped?: OnSkipped;
}

export interface SandboxProvider {
  /** `bubblewrap` or `unsafe-host`. */
  readonly name: string;
  /** True only for a provider that does NOT isolate (it must be chosen explicitly). */
  readonly unsafe: boolean;
  /** Probes that the provider really works here (e.g. runs `true` in a bwrap sandbox). */
  check(): Promise<ProviderHealth>;
  /** Makes the task's workspace (owned by the task's sandbox user), or makes it ready again (mounted); returns where the service reaches it. */
  create(taskId: string): Promise<string>;
  /** Where the service reaches the workspace, whether or not it exists or is ready (create makes it so). */
  workspacePath(taskId: string): string;
  /** Whether the workspace directory exists now. */
  exists(taskId: string): Promise<boolean>;
  /** The owner new files in this task's workspace must get, or undefined when ownership does not matter. */
  fileOwner(taskId: string): FileOwner | undefined;
  /** Runs one command inside the task's sandbox. Never throws for the command's own failures. */
  exec(taskId: string, request: ExecRequest): Promise<ExecResult>;
  /**
   * A tar stream of the whole workspace, read without following any link; FIFOs, sockets and
   * devices are left out and reported. Rejects (stream error) past `maxBytes` of archive, past
   * `timeoutMs`, or when `signal` fires.
   */
  snapshot(taskId: string, options: SnapshotOptions): Readable;
  /** Replaces the workspace by the contents of a snapshot stream (all or nothing), bounded like snapshot. */
  restore(taskId: string, archive: Readable, options: { maxBytes: number; timeoutMs: number }): Promise<void>;
  /** Kills anything still running for the task and removes its workspace. */
  destroy(taskId: string): Promise<void>;
  /** Lets go of what it keeps between commands (processes started ahead); the service stops. */
  close?(): Promise<void>;
}
