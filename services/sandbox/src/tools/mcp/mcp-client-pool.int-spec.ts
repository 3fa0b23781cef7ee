import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TaskMcpServers } from './mcp-client-pool';
import { McpClientPool } from './mcp-client-pool';
import { privateAddressGuardedFetch } from './private-address-guard';
import type { RunningMcpServer } from '../../../../../test/support/mcp-servers';
import {
  EVERYTHING_SERVER as EVERYTHING,
  MEMORY_SERVER as MEMORY,
  REPO_NODE_MODULES,
  startEverythingHttp,
} from '../../../../../test/support/mcp-servers';
import { bubblewrapStdioLauncher } from './mcp-stdio-launcher';
import type { McpServerConfig } from '@app/task-domain';

// Against the real reference servers from npm (@modelcontextprotocol/server-everything over stdio
// and Streamable HTTP, @modelcontextprotocol/server-memory over stdio), started from node_modules.

const limits = { connectTimeoutMs: 15_000, callTimeoutMs: 5_000, maxOutputChars: 10_000 };
const stdio = (args: string[], env: Record<string, string> = {}): McpServerConfig => ({
  kind: 'stdio',
  command: process.execPath,
  args,
  env,
  mounts: [REPO_NODE_MODULES],
  network: false,
});
// Stdio servers run the way the service runs them by default: inside bubblewrap.
const jail = bubblewrapStdioLauncher({ uid: 199_999, gid: 199_999 });
const service = (config: McpServerConfig) => ({ config, own: 'service' as const });

let httpServer: RunningMcpServer;
let httpUrl: string;
const errors: string[] = [];
let pool: McpClientPool;

beforeAll(async () => {
  httpServer = await startEverythingHttp();
  httpUrl = httpServer.url;
});
afterAll(async () => {
  httpServer?.close();
});
beforeEach(() => {
  errors.length = 0;
  pool = new McpClientPool(limits, undefined, jail, (message) => errors.push(message));
});
afterEach(async () => pool.closeAll());

describe('McpClientPool with real MCP servers', () => {
  it('lists a stdio server’s tools as mcp__<server>__<tool> with their own input schemas, and calls one', async () => {
    const servers: TaskMcpServers = { everything: service(stdio([EVERYTHING, 'stdio'])) };
    const tools = await pool.definitions('t1', { servers, secrets: {} });
    const echo = tools.find((t) => t.name === 'mcp__everything__echo');
    expect(echo).toBeDefined();
    expect(echo!.parameters).toMatchObject({ type: 'object', properties: { message: expect.any(Object) } });
    expect(tools.map((t) => t.name)).toContain('mcp__everything__get-sum');
    await expect(pool.call('t1', { servers, secrets: {} }, 'mcp__everything__echo', { message: 'hello' })).resolves.toEqual({
      status: 'success',
      output: 'Echo: hello',
    });
    const sum = await pool.call('t1', { servers, secrets: {} }, 'mcp__everything__get-sum', { a: 2, b: 40 });
    expect(sum.output).toContain('42');
  });

  it('maps image and resource results into text the model can read', async () => {
    const servers: TaskMcpServers = { everything: service(stdio([EVERYTHING, 'stdio'])) };
    const image = await pool.call('t2', { servers, secrets: {} }, 'mcp__everything__get-tiny-image', {});
    expect(image.status).toBe('success');
    expect(image.output).toMatch(/\[image: image\/png, \d+ bytes\]/);
    const resource = await pool.call('t2', { servers, secrets: {} }, 'mcp__everything__get-resource-reference', {
      resourceType: 'Text',
      resourceId: 1,
    });
    expect(resource.output).toMatch(/\[resource [a-z]+:\/\//);
  });

  it('talks to a Streamable HTTP server', async () => {
    const servers: TaskMcpServers = { remote: service({ kind: 'http', url: httpUrl, headers: {} }) };
    const tools = await pool.definitions('t3', { servers, secrets: {} });
    expect(tools.map((t) => t.name)).toContain('mcp__remote__echo');
    await expect(pool.call('t3', { servers, secrets: {} }, 'mcp__remote__echo', { message: 'over http' })).resolves.toEqual({
      status: 'success',
      output: 'Echo: over http',
    });
  });

  it('keeps state per task connection with server-memory', async () => {
    const servers: TaskMcpServers = { memory: service(stdio([MEMORY], { MEMORY_FILE_PATH: '/home/mcp/memory.jsonl' })) };
    const created = await pool.call('t4', { servers, secrets: {} }, 'mcp__memory__create_entities', {
      entities: [{ name: 'Ada', entityType: 'person', observations: ['wrote the first program'] }],
    });
    expect(created.status).toBe('success');
    const graph = await pool.call('t4', { servers, secrets: {} }, 'mcp__memory__read_graph', {});
    expect(graph.output).toContain('wrote the first program');
  });

  it('fills {{secrets.NAME}} into headers on connect, and names a missing secret', async () => {
    const seen: (string | undefined)[] = [];
    const recorder = createServer((req, res) => {
      seen.push(req.headers.authorization);
      res.writeHead(401).end();
    });
    await new Promise<void>((resolve) => recorder.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(recorder.address() as AddressInfo).port}/mcp`;
    try {
      const servers: TaskMcpServers = {
        gated: { config: { kind: 'http', url, headers: { Authorization: 'Bearer {{secrets.GH_TOKEN}}' } }, own: 'task' },
      };
      const result = await pool.call('t5', { servers, secrets: { GH_TOKEN: 'tok-123' } }, 'mcp__gated__anything', {});
      expect(result.status).toBe('error');
      expect(seen[0]).toBe('Bearer tok-123');
      const missing = await pool.call('t5b', { servers, secrets: {} }, 'mcp__gated__anything', {});
      expect(missing.output).toContain('references the secret GH_TOKEN, which this task does not have');
    } finally {
      recorder.close();
    }
  });

  it('leaves out a server that fails to start, with a clear error, and lists the others', async () => {
    const servers: TaskMcpServers = {
      broken: service(stdio(['-e', 'process.exit(3)'])),
      everything: service(stdio([EVERYTHING, 'stdio'])),
    };
    const tools = await pool.definitions('t6', { servers, secrets: {} });
    expect(tools.some((t) => t.name.startsWith('mcp__everything__'))).toBe(true);
    expect(tools.some((t) => t.name.startsWith('mcp__broken__'))).toBe(false);
    expect(errors.join('\n')).toMatch(/MCP server broken of task t6 is left out/);
    const call = await pool.call('t6', { servers, secrets: {} }, 'mcp__broken__x', {});
    expect(call).toMatchObject({ status: 'error', output: expect.stringContaining('MCP server broken is unavailable') });
  });

  it('ends a call to a server that hangs at the call timeout, and the next call works', async () => {
    pool = new McpClientPool({ ...limits, callTimeoutMs: 700 }, undefined, jail);
    const servers: TaskMcpServers = { everything: service(stdio([EVERYTHING, 'stdio'])) };
    const started = Date.now();
    const hung = await pool.call('t7', { servers, secrets: {} }, 'mcp__everything__trigger-long-running-operation', {
      duration: 30,
      steps: 3,
    });
    expect(hung.status).toBe('error');
    expect(hung.output).toMatch(/timed out|timeout/i);
    expect(Date.now() - started).toBeLessThan(10_000);
    await expect(pool.call('t7', { servers, secrets: {} }, 'mcp__everything__echo', { message: 'again' })).resolves.toEqual({
      status: 'success',
      output: 'Echo: again',
    });
  });

  it('reconnects after a stdio server crashed, and closes the task’s servers when asked', async () => {
    const servers: TaskMcpServers = { everything: service(stdio([EVERYTHING, 'stdio'])) };
    await pool.definitions('t8', { servers, secrets: {} });
    const pids = () => pidsOf(`${EVERYTHING} stdio`);
    const [pid] = await pids();
    expect(pid).toBeGreaterThan(0);
    process.kill(pid, 'SIGKILL');
    await new Promise((r) => setTimeout(r, 300));
    const after = await pool.call('t8', { servers, secrets: {} }, 'mcp__everything__echo', { message: 'back' });
    expect(after).toEqual({ status: 'success', output: 'Echo: back' });
    expect(await pids()).toHaveLength(1);
    await pool.closeTask('t8');
    await new Promise((r) => setTimeout(r, 300));
    expect(await pids()).toHaveLength(0);
    expect(pool.openTaskIds).not.toContain('t8');
  });
});

describe('a task’s own MCP servers and private addresses', () => {
  const own = (url: string): TaskMcpServers => ({ mine: { config: { kind: 'http', url, headers: {} }, own: 'task' } });

  it('refuses a loopback IP literal unless allow-listed', async () => {
    const guarded = new McpClientPool(limits, privateAddressGuardedFetch(new Set()), jail);
    const refused = await guarded.call('g1', { servers: own(httpUrl), secrets: {} }, 'mcp__mine__echo', { message: 'x' });
    expect(refused.status).toBe('error');
    expect(refused.output).toMatch(
      /refused: 127\.0\.0\.1 is a loopback address; only public addresses are reached \(hosts in MCP_ALLOW_HOSTS excepted\)/,
    );
    const port = new URL(httpUrl).port;
    const allowed = new McpClientPool(limits, privateAddressGuardedFetch(new Set([`127.0.0.1:${port}`])), jail);
    try {
      await expect(allowed.call('g2', { servers: own(httpUrl), secrets: {} }, 'mcp__mine__echo', { message: 'x' })).resolves.toEqual({
        status: 'success',
        output: 'Echo: x',
      });
    } finally {
      await guarded.closeAll();
      await allowed.closeAll();
    }
  });

  it('refuses a name that resolves to a private address, checked on the address the socket connects to', async () => {
    const guarded = new McpClientPool(limits, privateAddressGuardedFetch(new Set()), jail);
    const url = httpUrl.replace('127.0.0.1', 'localhost');
    const refused = await guarded.call('g3', { servers: own(url), secrets: {} }, 'mcp__mine__echo', { message: 'x' });
    expect(refused.status).toBe('error');
    expect(refused.output).toMatch(
      /refused: localhost is not a public address; only public addresses are reached \(hosts in MCP_ALLOW_HOSTS excepted\)/,
    );
    await guarded.closeAll();
  });

  it('leaves the service’s own servers alone: they are the operator’s choice', async () => {
    const guarded = new McpClientPool(limits, privateAddressGuardedFetch(new Set()), jail);
    const servers: TaskMcpServers = { svc: service({ kind: 'http', url: httpUrl, headers: {} }) };
    await expect(guarded.call('g4', { servers, secrets: {} }, 'mcp__svc__echo', { message: 'ok' })).resolves.toEqual({
      status: 'success',
      output: 'Echo: ok',
    });
    await guarded.closeAll();
  });
});

/** Our stdio servers' node processes (not the setpriv and bwrap launching them), found by their command line. */
async function pidsOf(commandLine: string): Promise<number[]> {
  const { readdir, readFile } = await import('node:fs/promises');
  const pids: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const cmd = await readFile(`/proc/${entry}/cmdline`, 'utf8').catch(() => '');
    const line = cmd.split('\0').join(' ');
    if (line.startsWith(`${process.execPath} `) && line.includes(commandLine) && Number(entry) !== process.pid) pids.push(Number(entry));
  }
  return pids;
}
