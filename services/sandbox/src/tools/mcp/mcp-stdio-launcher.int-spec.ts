import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import type { Server } from 'node:net';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { McpStdioServer } from '@app/task-domain';
import { PROBE_SERVER, REPO_NODE_MODULES } from '../../../../../test/support/mcp-servers';
import type { TaskMcpServers } from './mcp-client-pool';
import { McpClientPool } from './mcp-client-pool';
import type { McpStdioLauncher } from './mcp-stdio-launcher';
import { assertMountsAvoid, bubblewrapStdioLauncher, hostStdioLauncher } from './mcp-stdio-launcher';

// The real bwrap, and a real stdio MCP server (test/support/mcp-probe-server.js) whose tools try
// to reach what a jailed server must not: the host's files, DATA_DIR, the service's environment,
// the network when it is off. The same probes through the unsafe-host launcher show they can.

const limits = { connectTimeoutMs: 15_000, callTimeoutMs: 5_000, maxOutputChars: 10_000 };
const JAIL_UID = 199_999;
const probe = (overrides: Partial<McpStdioServer> = {}): TaskMcpServers => ({
  probe: {
    own: 'service',
    config: {
      kind: 'stdio',
      command: process.execPath,
      args: [PROBE_SERVER],
      env: { PROBE_FLAG: 'on' },
      mounts: [REPO_NODE_MODULES, join(PROBE_SERVER, '..')],
      network: false,
      ...overrides,
    },
  },
});

let hostDir: string;
let listener: Server;
let listenerPort: number;
const pools: McpClientPool[] = [];

beforeAll(async () => {
  process.env.ATS_PARENT_ONLY = 'must-not-reach-the-server';
  hostDir = await mkdtemp(join(tmpdir(), 'ats-jail-host-'));
  await writeFile(join(hostDir, 'secret.txt'), 'host secret');
  listener = createServer((socket) => socket.end());
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
  listenerPort = (listener.address() as { port: number }).port;
});
afterAll(async () => {
  delete process.env.ATS_PARENT_ONLY;
  await Promise.all(pools.map((pool) => pool.closeAll()));
  listener.close();
  await rm(hostDir, { recursive: true, force: true });
});

async function ask(launcher: McpStdioLauncher, servers: TaskMcpServers, tool: string, args: Record<string, unknown> = {}): Promise<string> {
  const pool = new McpClientPool(limits, undefined, launcher);
  pools.push(pool);
  const result = await pool.call(`jail-${pools.length}`, { servers, secrets: {} }, `mcp__probe__${tool}`, args);
  expect(result.status).toBe('success');
  return result.output;
}

describe('stdio MCP servers inside bubblewrap', () => {
  const jail = bubblewrapStdioLauncher({ uid: JAIL_UID, gid: JAIL_UID });

  it('runs the server as the unprivileged uid, in its own HOME, with only its configured environment', async () => {
    const whoami = await ask(jail, probe(), 'whoami');
    // Checked as any user: root must drop to the jail's uid; anyone else has no uid to drop to and
    // runs the server as itself (never as root, which the unprivileged user namespace cannot map).
    const serviceUid = process.getuid!();
    expect(whoami).toContain(`uid=${serviceUid === 0 ? JAIL_UID : serviceUid} `);
    expect(whoami).toContain('cwd=/home/mcp ');
    // The SDK adds a few harmless login variables (SHELL, TERM, USER, LOGNAME); bwrap sets PWD.
    const names = whoami.replace(/^.* env=/, '').split(',');
    expect(names).toContain('PROBE_FLAG');
    expect(
      names.filter((name) => !['HOME', 'LANG', 'PATH', 'PROBE_FLAG', 'PWD', 'SHELL', 'TERM', 'USER', 'LOGNAME'].includes(name)),
    ).toEqual([]);
  });

  it('hides the host’s files and DATA_DIR-like directories, and keeps /usr and its mounts read-only', async () => {
    const servers = probe();
    expect(await ask(jail, servers, 'read', { path: join(hostDir, 'secret.txt') })).toBe('error: ENOENT');
    expect(await ask(jail, servers, 'read', { path: '/etc/shadow' })).toBe('error: ENOENT');
    expect(await ask(jail, servers, 'read', { path: '/root/' })).toBe('error: ENOENT');
    expect(await ask(jail, servers, 'write', { path: '/usr/probe.txt' })).toMatch(/^error: (EROFS|EACCES)$/);
    expect(await ask(jail, servers, 'write', { path: join(REPO_NODE_MODULES, 'probe.txt') })).toMatch(/^error: (EROFS|EACCES)$/);
    expect(await ask(jail, servers, 'write', { path: '/home/mcp/notes.txt' })).toBe('ok: written');
  });

  it('has no network when the server says network: false, and the host’s when it does not', async () => {
    expect(await ask(jail, probe({ network: false }), 'connect', { host: '127.0.0.1', port: listenerPort })).toBe('error: ECONNREFUSED');
    expect(await ask(jail, probe({ network: true }), 'connect', { host: '127.0.0.1', port: listenerPort })).toBe('ok: connected');
  });

  it('fails clearly when the server’s files are not mounted', async () => {
    const pool = new McpClientPool(limits, undefined, jail);
    pools.push(pool);
    const result = await pool.call('jail-unmounted', { servers: probe({ mounts: [] }), secrets: {} }, 'mcp__probe__whoami', {});
    expect(result.status).toBe('error');
    expect(result.output).toMatch(
      /^MCP server probe is unavailable: .*; its stderr ended with: .*Cannot find module '.*mcp-probe-server\.js'/s,
    );
  });

  it('tells why a server failed from its stderr, with the server’s own env values redacted', async () => {
    const pool = new McpClientPool(limits, undefined, jail);
    pools.push(pool);
    const talker = {
      kind: 'stdio' as const,
      command: process.execPath,
      args: ['-e', "console.error('cannot log in with ' + process.env.API_TOKEN); process.exit(2)"],
      env: { API_TOKEN: 'tok-4f9a-secret' },
      mounts: [],
      network: false,
    };
    const result = await pool.call(
      'jail-stderr',
      { servers: { probe: { own: 'service', config: talker } }, secrets: {} },
      'mcp__probe__whoami',
      {},
    );
    expect(result.status).toBe('error');
    expect(result.output).toContain('its stderr ended with: cannot log in with [REDACTED:API_TOKEN]');
    expect(result.output).not.toContain('tok-4f9a-secret');
  });
});

describe('stdio MCP servers with SANDBOX_PROVIDER=unsafe-host', () => {
  it('run as plain child processes that can read the host’s files (which is why bubblewrap is the default)', async () => {
    expect(await ask(hostStdioLauncher, probe(), 'read', { path: join(hostDir, 'secret.txt') })).toBe('ok: host secret');
    const whoami = await ask(hostStdioLauncher, probe(), 'whoami');
    expect(whoami).toContain('PROBE_FLAG');
    expect(whoami).not.toContain('ATS_PARENT_ONLY');
  });
});

describe('assertMountsAvoid', () => {
  const servers = (mounts: string[]) => ({ s: { kind: 'stdio' as const, command: 'node', args: [], env: {}, mounts, network: true } });
  it.each([['/srv/ats/data'], ['/srv/ats'], ['/srv/ats/data/workspaces']])(
    'refuses a mount of %s when DATA_DIR is /srv/ats/data',
    (mount) => expect(() => assertMountsAvoid(servers([mount]), '/srv/ats/data')).toThrow(/MCP_SERVERS\.s\.mounts: .* overlaps DATA_DIR/),
  );
  it('accepts mounts beside DATA_DIR', () =>
    expect(() => assertMountsAvoid(servers(['/srv/ats/node_modules', '/srv/ats/data2']), '/srv/ats/data')).not.toThrow());
});
