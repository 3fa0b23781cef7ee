import { existsSync } from 'node:fs';
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
    '--ro-bind', '/usr', '/usr',
    '--symlink', 'usr/bin', '/bin',
    '--symlink', 'usr/lib', '/lib',
    '--symlink', 'usr/lib64', '/lib64',
    '--symlink', 'usr/sbin', '/sbin',
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

export interface BwrapInvocation {
  readonly workspace: string;
  readonly user: FileOwner;
  readonly limits: SandboxLimits;
  readonly network: boolean;
  /** Host files holding the sandbox user's /etc/passwd and /etc/group. */
  readonly passwdFile: string;
  readonly groupFile: string;
  readonly command: string;
  /** Variables that would change how the host-side launchers run: set inside the sandbox only. */
  readonly insideOnlyEnv: Readonly<Record<string, string>>;
}

/**
 * The full argv: prlimit sets the per-command resource limits, setpriv drops to the task's own
 * unprivileged uid (bwrap then builds an unprivileged user namespace), bwrap builds the sandbox:
 * fresh namespaces of every kind (network too unless allowed), /usr and a few /etc files
 * read-only, a private /proc, /dev and size-bounded /tmp, the workspace read-write at /workspace
 * and nothing else of the host. The environment is passed by the caller as the process env, not
 * as arguments, so secret values never show in the host's process list.
 */
export function bwrapArgv(i: BwrapInvocation): string[] {
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
  const bwrap = [
    BWRAP,
    ...isolationArgs(i.network),
    '--hostname',
    'sandbox',
    ...systemBinds(i.network),
    '--ro-bind', i.passwdFile, '/etc/passwd',
    '--ro-bind', i.groupFile, '/etc/group',
    '--proc', '/proc',
    '--dev', '/dev',
    '--size', String(Math.min(limits.diskQuotaBytes, 512 * 1024 * 1024)),
    '--tmpfs', '/tmp',
    '--bind', i.workspace, SANDBOX_WORKSPACE,
    '--chdir', SANDBOX_WORKSPACE,
    ...Object.entries(i.insideOnlyEnv).flatMap(([name, value]) => ['--setenv', name, value]),
    '--',
    '/bin/bash', '-lc', i.command,
  ];
  return [...prlimit, ...runAsArgv(i.user), ...bwrap];
}

// The dynamic loader and libc read these in every program, the host-side launchers included
// (glibc's "unsecure" list): a task's LD_PRELOAD must reach its own commands, never prlimit.
const LOADER_VARIABLE = /^(LD_|GCONV_PATH$|GETCONF_DIR$|HOSTALIASES$|LOCALDOMAIN$|LOCPATH$|MALLOC_|NIS_PATH$|NLSPATH$|RESOLV_HOST_CONF$|RES_OPTIONS$|TMPDIR$|TZDIR$)/;

/**
 * The environment inside: a fixed base plus the task's own variables (valid names only), split
 * into what is safe to hand to the launchers as their environment and what must be set inside.
 */
export function sandboxEnv(env: Readonly<Record<string, string>>): { launcherEnv: Record<string, string>; insideOnlyEnv: Record<string, string> } {
  const launcherEnv: Record<string, string> = { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: SANDBOX_WORKSPACE, USER: 'sandbox', LANG: 'C.UTF-8' };
  const insideOnlyEnv: Record<string, string> = { TMPDIR: '/tmp' };
  for (const [name, value] of Object.entries(env)) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) continue;
    if (LOADER_VARIABLE.test(name)) insideOnlyEnv[name] = value;
    else launcherEnv[name] = value;
  }
  return { launcherEnv, insideOnlyEnv };
}
