import { existsSync } from 'node:fs';
import { assertSettable } from '../process/settable-env';
import { FileOwner, SandboxLimits } from '../sandbox-provider.port';

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
export const CHILD_FD = { args: 3, seccomp: 4, passwd: 5, group: 6 } as const;

/** Memory-backed folders are bounded: what a command writes there is RAM. */
export const SHM_BYTES = 64 * 1024 * 1024;
export const TMP_MAX_BYTES = 512 * 1024 * 1024;

export interface BwrapInvocation {
  /** The workspace's host path; it reaches bwrap through a pipe, never the command line. */
  readonly workspace: string;
  readonly user: FileOwner;
  readonly limits: SandboxLimits;
  readonly network: boolean;
  readonly command: string;
  /** Variables that would change how the host-side launchers run: set inside the sandbox only. */
  readonly insideOnlyEnv: Readonly<Record<string, string>>;
  /** The compiled seccomp filter, or undefined where we have no syscall table (no filter then). */
  readonly seccomp?: Buffer;
}

export interface BwrapLaunch {
  readonly argv: string[];
  /** What the child gets as fds 3, 4, …: bytes fed through a pipe, or null for none. */
  readonly fds: (Buffer | null)[];
}

/**
 * How to start one command. prlimit sets the per-command resource limits; bwrap, started by the
 * service as root, builds the sandbox with full privilege (so the workspace can sit below
 * folders the task's uid could never pass through); inside it, setpriv drops for good to the
 * task's own unprivileged uid, with no capabilities, no supplementary groups and no_new_privs,
 * before anything of the task runs. Only setpriv and the command are on the command line:
 * bwrap's options arrive through a pipe (`--args`), so neither the host's process list nor the
 * sandbox's /proc/1/cmdline shows a host path, a task id or an environment value.
 *
 * Inside: fresh PID, IPC, UTS, cgroup and mount namespaces (network too unless allowed); /usr
 * and a few /etc files read-only; a private /proc; a minimal /dev; bounded tmpfs at /tmp and
 * /dev/shm; the workspace read-write at /workspace; `/` and `/dev` read-only, so nothing else
 * can be written (an unbounded tmpfs would be host memory); the seccomp filter, which also
 * refuses new user namespaces. The sandbox's pid 1 is bwrap's reaper, a root process the task
 * can neither signal nor inspect.
 */
export function bwrapLaunch(i: BwrapInvocation): BwrapLaunch {
  const { limits } = i;
  const prlimit = [
    PRLIMIT,
    `--cpu=${limits.cpuSeconds}:${limits.cpuSeconds + 1}`,
    `--as=${limits.memoryBytes}`,
    `--nproc=${limits.maxProcesses}`,
    `--fsize=${limits.diskQuotaBytes}`,
    '--core=0',
    '--',
  ];
  const options = [
    // No user namespace: the task's uid is then the host's, whose RLIMIT_NPROC and files we control.
    '--unshare-pid',
    '--unshare-ipc',
    '--unshare-uts',
    '--unshare-cgroup',
    ...(i.network ? [] : ['--unshare-net']),
    '--die-with-parent',
    '--new-session',
    '--hostname',
    'sandbox',
    // Made first and explicitly: a folder bwrap creates on the way to a mount point is 0700 when it runs as root.
    '--perms',
    '0755',
    '--dir',
    '/etc',
    ...systemBinds(i.network),
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
    String(Math.min(limits.diskQuotaBytes, TMP_MAX_BYTES)),
    '--tmpfs',
    '/tmp',
    '--bind',
    i.workspace,
    SANDBOX_WORKSPACE,
    '--remount-ro',
    '/dev',
    '--remount-ro',
    '/',
    '--chdir',
    SANDBOX_WORKSPACE,
    // What setpriv needs to become the task's user; it drops them all with the change.
    '--cap-add',
    'CAP_SETUID',
    '--cap-add',
    'CAP_SETGID',
    '--cap-add',
    'CAP_SETPCAP',
    ...(i.seccomp ? ['--seccomp', String(CHILD_FD.seccomp)] : []),
    ...Object.entries(i.insideOnlyEnv).flatMap(([name, value]) => ['--setenv', name, value]),
  ];
  const argv = [...prlimit, BWRAP, '--args', String(CHILD_FD.args), '--', ...dropToUserArgv(i.user), '/bin/bash', '-lc', i.command];
  return {
    argv,
    fds: [
      Buffer.from(options.map((o) => `${o}\0`).join('')),
      i.seccomp ?? null,
      Buffer.from(
        `root:x:0:0:root:/root:/usr/sbin/nologin\nsandbox:x:${i.user.uid}:${i.user.gid}:sandbox:/workspace:/bin/bash\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n`,
      ),
      Buffer.from(`root:x:0:\nsandbox:x:${i.user.gid}:\nnogroup:x:65534:\n`),
    ],
  };
}

/** setpriv's argv prefix that becomes `user` for good: no capabilities left in any set, no way back up. */
function dropToUserArgv(user: FileOwner): string[] {
  return [
    SETPRIV,
    '--reuid',
    String(user.uid),
    '--regid',
    String(user.gid),
    '--clear-groups',
    '--inh-caps=-all',
    '--bounding-set=-all',
    '--no-new-privs',
    '--',
  ];
}

// The dynamic loader and libc read these in every program, the host-side launchers included
// (glibc's "unsecure" list): a task's LD_PRELOAD must reach its own commands, never prlimit.
const LOADER_VARIABLE =
  /^(LD_|GCONV_PATH$|GETCONF_DIR$|HOSTALIASES$|LOCALDOMAIN$|LOCPATH$|MALLOC_|NIS_PATH$|NLSPATH$|RESOLV_HOST_CONF$|RES_OPTIONS$|TMPDIR$|TZDIR$)/;

/**
 * The environment inside: a fixed base plus the task's own variables (valid names only), split
 * into what is safe to hand to the launchers as their environment and what must be set inside.
 * A value with a NUL is refused whole: it would end the value early in an environment, and in
 * bwrap's NUL-separated options it would start an option of its own.
 */
export function sandboxEnv(env: Readonly<Record<string, string>>): {
  launcherEnv: Record<string, string>;
  insideOnlyEnv: Record<string, string>;
} {
  const launcherEnv: Record<string, string> = {
    PATH: '/usr/local/bin:/usr/bin:/bin',
    HOME: SANDBOX_WORKSPACE,
    USER: 'sandbox',
    LANG: 'C.UTF-8',
  };
  const insideOnlyEnv: Record<string, string> = { TMPDIR: '/tmp' };
  assertSettable(env);
  for (const [name, value] of Object.entries(env)) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) continue;
    if (LOADER_VARIABLE.test(name)) insideOnlyEnv[name] = value;
    else launcherEnv[name] = value;
  }
  return { launcherEnv, insideOnlyEnv };
}
