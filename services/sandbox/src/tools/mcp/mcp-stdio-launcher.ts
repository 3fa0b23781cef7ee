import { chown } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { McpServerConfig, McpStdioServer } from '@app/task-domain';
import { BWRAP, isolationArgs, runAsArgv, systemBinds } from '../../provider/bubblewrap/bwrap-args';
import type { SandboxConfig } from '../../provider/sandbox.config';
import type { FileOwner } from '../../provider/sandbox-provider.port';

/** How to start one stdio MCP server: what StdioClientTransport spawns. */
export interface StdioLaunch {
  readonly command: string;
  readonly args: string[];
  readonly env: Record<string, string>;
  readonly cwd: string;
}

/**
 * Turns a configured stdio server into the process to spawn. `homeDir` is an empty host
 * directory of the server's own (its HOME and working directory), removed when it closes.
 */
export interface McpStdioLauncher {
  /** Said in the service's start-up log. */
  readonly description: string;
  launch(server: McpStdioServer, homeDir: string): Promise<StdioLaunch>;
}

const JAIL_HOME = '/home/mcp';
const JAIL_PATH = '/usr/local/bin:/usr/bin:/bin';

/** With SANDBOX_PROVIDER=unsafe-host: a plain child process with only PATH, HOME and its env. */
export const hostStdioLauncher: McpStdioLauncher = {
  description: 'stdio MCP servers run as plain child processes (SANDBOX_PROVIDER=unsafe-host: no isolation)',
  async launch(server, homeDir) {
    return {
      command: server.command,
      args: [...server.args],
      env: { PATH: process.env.PATH ?? JAIL_PATH, HOME: homeDir, ...server.env },
      cwd: homeDir,
    };
  },
};

/**
 * With bubblewrap: each server in its own namespaces, as an unprivileged uid when the service
 * runs as root, seeing only /usr, a few harmless /etc files, its configured `mounts` read-only
 * and its own empty HOME read-write; never DATA_DIR, a task's workspace or the service's files.
 * The network is shared unless the server says `"network": false` (most integrations need it).
 */
export function bubblewrapStdioLauncher(user: FileOwner): McpStdioLauncher {
  const dropPrivileges = process.getuid?.() === 0;
  return {
    description: `stdio MCP servers run inside bubblewrap${dropPrivileges ? ` as uid ${user.uid}` : ''}, seeing only /usr and their configured mounts`,
    async launch(server, homeDir) {
      if (dropPrivileges) await chown(homeDir, user.uid, user.gid);
      const mounts = server.mounts.flatMap((path) => ['--ro-bind', path, path]);
      const setpriv = dropPrivileges ? runAsArgv(user) : [];
      const bwrap = [
        BWRAP,
        ...isolationArgs(server.network),
        ...systemBinds(server.network),
        '--proc',
        '/proc',
        '--dev',
        '/dev',
        '--tmpfs',
        '/tmp',
        ...mounts,
        '--bind',
        homeDir,
        JAIL_HOME,
        '--chdir',
        JAIL_HOME,
        '--',
        server.command,
        ...server.args,
      ];
      const [command, ...args] = [...setpriv, ...bwrap];
      // The environment goes to the launchers as their process env, so values never show in the host's process list.
      return { command, args, env: { PATH: JAIL_PATH, HOME: JAIL_HOME, LANG: 'C.UTF-8', ...server.env }, cwd: homeDir };
    },
  };
}

/**
 * A stdio server's mounts must not reach DATA_DIR (every task's workspace, the embedded store):
 * checked at start-up, so a careless mount of the service's own directory stops the service.
 */
export function assertMountsAvoid(servers: Readonly<Record<string, McpServerConfig>>, dataDir: string): void {
  const data = resolve(dataDir);
  for (const [name, server] of Object.entries(servers)) {
    if (server.kind !== 'stdio') continue;
    const overlapping = server.mounts.find((mount) => data === mount || data.startsWith(`${mount}/`) || mount.startsWith(`${data}/`));
    if (overlapping)
      throw new Error(`MCP_SERVERS.${name}.mounts: ${overlapping} overlaps DATA_DIR (${data}); mount only the server's own files`);
  }
}

/** The launcher for this service's sandbox provider; the jail's uid is just below the tasks' range. */
export function stdioLauncherFor(sandbox: SandboxConfig): McpStdioLauncher {
  if (sandbox.provider === 'unsafe-host') return hostStdioLauncher;
  const uid = sandbox.uidBase - 1;
  return bubblewrapStdioLauncher({ uid, gid: uid });
}
