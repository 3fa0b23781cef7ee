import { existsSync } from 'node:fs';
import { FORWARDER_SOURCE, READY_FD, SANDBOX_EGRESS } from '../../egress/sandbox-forwarder';
import { assertSettable } from '../process/settable-env';
import type { FileOwner, SandboxLimits } from '../sandbox-provider.port';

export const BWRAP = '/usr/bin/bwrap';
const SETPRIV = '/usr/bin/setpriv';
export const PRLIMIT = '/usr/bin/prlimit';
export const SANDBOX_WORKSPACE = '/workspace';

/** Read-only pieces of /etc that programs need and that hold nothing secret. */
const ETC_READ_ONLY = [
  '/etc/alternatives',
  '/etc/ld.so.cache',
  '/etc/ld.so.conf',
  '/etc/ld.so.conf.d',
  '/etc/localtime',
  '/etc/ssl',
  '/etc/ca-certificates',
  '/etc/profile',
  '/etc/profile.d',
  '/etc/bash.bashrc',
  '/etc/nsswitch.conf',
  '/etc/mime.types',
  '/etc/inputrc',
];
const ETC_NETWORK = ['/etc/resolv.conf', '/etc/hosts'];

/**
 * What every sandbox sees of the host's system, read-only: /usr (with the /bin, /lib, … links
 * into it) and the harmless /etc files, plus resolv.conf and hosts when it has the network.
 */
export function systemBinds(network: boolean): string[] {
  const etc = [...ETC_READ_ONLY, ...(network ? ETC_NETWORK : [])].filter((path) => existsSync(path)); // bwrap fails on a missing one
  return [
    '--ro-bind',
    '/usr',
    '/usr',
    '--symlink',
    'usr/bin',
    '/bin',
    '--symlink',
    'usr/lib',
    '/lib',
    '--symlink',
    'usr/lib64',
    '/lib64',
    '--symlink',
    'usr/sbin',
    '/sbin',
    ...etc.flatMap((path) => ['--ro-bind', path, path]),
  ];
}

/** setpriv's argv prefix that runs what follows as `user`, with no supplementary groups. */
export function runAsArgv(user: FileOwner): string[] {
  return [SETPRIV, '--reuid', String(user.uid), '--regid', String(user.gid), '--clear-groups', '--'];
}

/** Fresh namespaces of every kind (the network's too unless shared), gone with the parent. */
export function isolationArgs(network: boolean): string[] {
  return ['--unshare-all', ...(network ? ['--share-net'] : []), '--die-with-parent', '--new-session'];
}

/** The descriptors a sandboxed command is started with, besides stdin/stdout/stderr. */
export const CHILD_FD = { args: 3, seccomp: 4, passwd: 5, group: 6, forwarder: 7 } as const;

/** Memory-backed folders are bounded: what a command writes there is RAM. */
export const SHM_BYTES = 64 * 1024 * 1024;
export const TMP_MAX_BYTES = 512 * 1024 * 1024;

/**
 * The whole environment of the host-side launchers (prlimit, then bwrap): fixed, so nothing of a
 * task (its env, its secrets, a loader variable) is in the environment of any process outside
 * the sandbox. The sandbox's own environment reaches bwrap as options through a pipe.
 */
export const LAUNCHER_ENV: Readonly<Record<string, string>> = { PATH: '/usr/bin:/bin', LANG: 'C.UTF-8' };

/** Where the command reaches the shell inside: an environment value bwrap sets, gone before the command runs. */
const COMMAND_VARIABLE = '__ATS_SANDBOX_COMMAND';

/**
 * What runs inside for a `shell` call: a login shell that takes its command from the environment
 * (set through bwrap's options pipe), unsets it and runs it. So the command is on no command line
 * (not even the sandbox's own /proc/1/cmdline), and one argv serves every command: a launcher can
 * be started, and placed in its task's cgroup, before its command is known (warm-launchers.ts).
 * Without a command (the pipe closed early: the service died) it runs nothing.
 */
export const SHELL_ARGV: readonly string[] = [
  '/bin/bash',
  '-lc',
  // With the egress proxy's socket bound in, its forwarder starts first, and the command runs once
  // it listens (it then closes the pipe the command substitution reads). It is started from a
  // subshell that exits at once, so it is no job of the command's shell: a `wait` in the command
  // waits for the command's own processes, never for the forwarder (a process substitution would
  // be waited for). It ends with the sandbox.
  `if [ -S ${SANDBOX_EGRESS.socket} ]; then : "$( (${SANDBOX_EGRESS.node} ${SANDBOX_EGRESS.forwarder} ${READY_FD}>&1 >/dev/null 2>&1 </dev/null &) )"; fi; ` +
    `[ -n "\${${COMMAND_VARIABLE}+x}" ] || exit 125; eval "unset ${COMMAND_VARIABLE}; $${COMMAND_VARIABLE}"`,
];

/** The environment inside for a `shell` call: the task's, and the command for SHELL_ARGV to run. */
export function shellEnv(command: string, env: Readonly<Record<string, string>>): Record<string, string> {
  return { ...env, [COMMAND_VARIABLE]: command };
}

export interface BwrapInvocation {
  /** The workspace's mount point on the host (never a task value); it reaches bwrap through a pipe. */
  readonly workspace: string;
  /** The task's own unprivileged uid, which bwrap already runs as on the host. */
  readonly user: FileOwner;
  readonly limits: SandboxLimits;
  /** Which rlimits stand in for what the host bounds otherwise (see perProcessLimits). */
  readonly bounds: HostBounds;
  /**
   * With SANDBOX_NETWORK=egress: the forwarder and node are bound in for every launch (so a
   * launcher started ahead has them), the proxy's socket when this command has one. Absent: no
   * way out at all. The sandbox's network namespace is empty either way.
   */
  readonly egress?: { readonly socketPath?: string };
  /** What runs inside, argv[0] first: SHELL_ARGV, or tar for a snapshot. */
  readonly argv: readonly string[];
  /** The whole environment inside (sandboxEnv). */
  readonly env: Readonly<Record<string, string>>;
  /** The compiled seccomp filter, or undefined where we have no syscall table (no filter then). */
  readonly seccomp?: Buffer;
}

/** What the host bounds for every task as a whole, so that a per-process rlimit need not. */
export interface HostBounds {
  /** A per-task cgroup bounds memory and processes. */
  readonly cgroup: boolean;
  /** The workspace is a filesystem of its own, as big as the quota. */
  readonly filesystem: boolean;
}

export interface BwrapLaunch {
  /** Run as the task's uid: the service drops to it between fork and exec. */
  readonly argv: string[];
  /** What the child gets as fds 3, 4, …: bytes fed through a pipe, or null for none. */
  readonly fds: (Buffer | null)[];
}

/**
 * How to start one sandboxed process. The service forks, drops for good to the task's own
 * unprivileged uid (no capabilities, no supplementary groups) and execs prlimit with a fixed
 * environment; prlimit sets the per-process limits and execs bwrap, which makes a user namespace
 * (the task's uid mapped to itself, nothing else: no uid 0 inside), then PID, IPC, UTS, cgroup,
 * mount and network namespaces. No process on the way holds a host privilege once anything of
 * the task exists in it: the task's environment (a shell's command included, see SHELL_ARGV) and
 * the sandbox's layout reach bwrap through a pipe (`--args`), the environment applying to what
 * runs inside only.
 *
 * Inside: /usr and a few /etc files read-only; a private /proc (its /proc/sys and the rest are
 * root's, so read-only to the task); no /sys; a minimal /dev; bounded tmpfs at /tmp and /dev/shm;
 * the workspace read-write at /workspace; `/` and `/dev` read-only; the seccomp filter, which
 * refuses new namespaces of every kind.
 */
export function bwrapLaunch(i: BwrapInvocation): BwrapLaunch {
  const options = [
    '--unshare-user',
    '--uid',
    String(i.user.uid),
    '--gid',
    String(i.user.gid),
    '--unshare-pid',
    '--unshare-ipc',
    '--unshare-uts',
    '--unshare-cgroup',
    '--unshare-net',
    '--die-with-parent',
    '--new-session',
    '--hostname',
    'sandbox',
    '--clearenv',
    ...Object.entries(i.env).flatMap(([name, value]) => ['--setenv', name, value]),
    '--perms',
    '0755',
    '--dir',
    '/etc',
    ...systemBinds(false),
    '--perms',
    '0644',
    '--ro-bind-data',
    String(CHILD_FD.passwd),
    '/etc/passwd',
    '--perms',
    '0644',
    '--ro-bind-data',
    String(CHILD_FD.group),
    '/etc/group',
    '--proc',
    '/proc',
    '--dev',
    '/dev',
    '--perms',
    '1777',
    '--size',
    String(SHM_BYTES),
    '--tmpfs',
    '/dev/shm',
    '--perms',
    '1777',
    '--size',
    String(Math.min(i.limits.diskQuotaBytes, TMP_MAX_BYTES)),
    '--tmpfs',
    '/tmp',
    '--bind',
    i.workspace,
    SANDBOX_WORKSPACE,
    ...(i.egress ? egressBinds(i.egress.socketPath) : []),
    '--remount-ro',
    '/dev',
    '--remount-ro',
    '/',
    '--chdir',
    SANDBOX_WORKSPACE,
    ...(i.seccomp ? ['--seccomp', String(CHILD_FD.seccomp)] : []),
  ];
  return {
    argv: [PRLIMIT, ...perProcessLimits(i.limits, i.bounds), '--', BWRAP, '--args', String(CHILD_FD.args), '--', ...i.argv],
    fds: [
      Buffer.from(options.map((o) => `${o}\0`).join('')),
      i.seccomp ?? null,
      Buffer.from(
        `root:x:0:0:root:/root:/usr/sbin/nologin\nsandbox:x:${i.user.uid}:${i.user.gid}:sandbox:/workspace:/bin/bash\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n`,
      ),
      Buffer.from(`root:x:0:\nsandbox:x:${i.user.gid}:\nnogroup:x:65534:\n`),
      ...(i.egress ? [Buffer.from(FORWARDER_SOURCE)] : []),
    ],
  };
}

/** /run/ats, read-only like the rest of `/`: the forwarder, the node that runs it, and the proxy's socket when there is one. */
function egressBinds(socketPath: string | undefined): string[] {
  return [
    '--dir',
    '/run/ats',
    '--ro-bind',
    process.execPath,
    SANDBOX_EGRESS.node,
    '--perms',
    '0444',
    '--ro-bind-data',
    String(CHILD_FD.forwarder),
    SANDBOX_EGRESS.forwarder,
    ...(socketPath ? ['--bind', socketPath, SANDBOX_EGRESS.socket] : []),
  ];
}

/**
 * prlimit's options: CPU seconds and no core files always; the file size bound (no file's
 * apparent size past the quota, so no sparse giant either). Memory per process and the process
 * count only where no per-task cgroup bounds the task as a whole (RLIMIT_AS would also refuse
 * the large address-space reservations of Go, Java or V8 that a cgroup lets through).
 */
export function perProcessLimits(limits: SandboxLimits, bounds: HostBounds): string[] {
  return [
    `--cpu=${limits.cpuSeconds}:${limits.cpuSeconds + 1}`,
    `--fsize=${limits.diskQuotaBytes}`,
    '--core=0',
    ...(bounds.cgroup ? [] : [`--as=${limits.memoryBytes}`, `--nproc=${limits.maxProcesses}`]),
  ];
}

/**
 * The environment inside: a fixed base, then the task's own variables (valid names only; a
 * task's PATH wins), all set by bwrap for what runs inside, loader variables included, since no
 * process that reads them runs with privileges. A value with a NUL is refused whole: it would end
 * the value early, and in bwrap's NUL-separated options it would start an option of its own.
 */
export function sandboxEnv(env: Readonly<Record<string, string>>): Record<string, string> {
  assertSettable(env);
  const inside: Record<string, string> = {
    PATH: '/usr/local/bin:/usr/bin:/bin',
    HOME: SANDBOX_WORKSPACE,
    USER: 'sandbox',
    LANG: 'C.UTF-8',
    TMPDIR: '/tmp',
  };
  for (const [name, value] of Object.entries(env)) if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) inside[name] = value;
  return inside;
}
