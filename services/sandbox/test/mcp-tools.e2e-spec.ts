import type { Harness } from '../../../test/support/service-harness';
import { startHarness, waitFor } from '../../../test/support/service-harness';
import { followStream } from '../../../test/support/sse-client';
import type { RunningMcpServer } from '../../../test/support/mcp-servers';
import { EVERYTHING_SERVER, REPO_NODE_MODULES, startEverythingHttp } from '../../../test/support/mcp-servers';

// MCP tools through the whole service: the service's own stdio server (MCP_SERVERS) and a task's
// own Streamable HTTP server (mcpServers on create), both the real server-everything. The stdio
// one runs inside bubblewrap (the default), seeing node_modules read-only and no network.

describe('MCP tools (mcp__<server>__<tool>)', () => {
  let h: Harness;
  let remote: RunningMcpServer;
  beforeAll(async () => {
    remote = await startEverythingHttp();
    h = await startHarness({
      MCP_SERVERS: JSON.stringify({
        everything: { command: process.execPath, args: [EVERYTHING_SERVER, 'stdio'], mounts: [REPO_NODE_MODULES], network: false },
      }),
      MCP_ALLOW_HOSTS: `127.0.0.1:${remote.port}`,
    });
  });
  afterAll(async () => {
    await h?.close();
    remote?.close();
  });

  const create = (json: Record<string, unknown>) => h.api('/api/v1/tasks', { method: 'POST', json });

  it('offers the service’s and the task’s MCP tools to the model and runs them', async () => {
    h.model.script(
      {
        toolCalls: [
          { name: 'mcp__everything__echo', arguments: { message: 'from stdio' } },
          { name: 'mcp__mine__get-sum', arguments: { a: 20, b: 22 } },
        ],
      },
      { text: 'Both servers answered.' },
    );
    const res = await create({
      message: 'use MCP',
      mcpServers: { mine: { url: remote.url, headers: { 'X-Token': '{{secrets.MCP_TOKEN}}' } } },
      secrets: { MCP_TOKEN: 'mcp-token-value-123' },
    });
    expect(res.status).toBe(201);
    const events = await followStream(`${h.url}/api/v1/tasks/${res.body.data.id}/stream`, 'test-key-tenant-a', { timeoutMs: 30_000 });
    const results = events.filter((e) => e.kind === 'tool_result').map((e) => e.payload.data);
    expect(results).toEqual([
      expect.objectContaining({ toolName: 'mcp__everything__echo', status: 'success', output: 'Echo: from stdio' }),
      expect.objectContaining({ toolName: 'mcp__mine__get-sum', status: 'success', output: expect.stringContaining('42') }),
    ]);
    const offered = (h.model.requests[h.model.requests.length - 2].tools ?? []).map((t) => t.function?.name);
    expect(offered).toEqual(expect.arrayContaining(['read_file', 'shell', 'mcp__everything__echo', 'mcp__mine__echo']));
    // The stored task keeps the reference, never the value.
    expect(JSON.stringify((await h.api(`/api/v1/tasks/${res.body.data.id}`)).body)).not.toContain('mcp-token-value-123');
  });

  it('gives a clear tool error for a tool no server has, and the task goes on', async () => {
    h.model.script(
      {
        toolCalls: [
          { name: 'mcp__everything__no-such-tool', arguments: {} },
          { name: 'mcp__ghost__x', arguments: {} },
        ],
      },
      { text: 'Carried on.' },
    );
    const id = (await create({ message: 'bad MCP calls' })).body.data.id;
    const events = await followStream(`${h.url}/api/v1/tasks/${id}/stream`, 'test-key-tenant-a', { timeoutMs: 30_000 });
    const results = events.filter((e) => e.kind === 'tool_result').map((e) => e.payload.data);
    expect(results[0]).toMatchObject({
      status: 'error',
      output: expect.stringContaining('MCP server everything has no tool matching "mcp__everything__no-such-tool"'),
    });
    expect(results[1]).toMatchObject({ status: 'error', output: expect.stringContaining('no MCP server "ghost" for this task') });
    expect(events.at(-1)!.payload.data).toMatchObject({ status: 'completed' });
  });

  it('applies proceed_always to the same server and tool only', async () => {
    h.model.script(
      { toolCalls: [{ name: 'mcp__everything__echo', arguments: { message: 'one' } }] },
      { toolCalls: [{ name: 'mcp__everything__echo', arguments: { message: 'two' } }] },
      { toolCalls: [{ name: 'mcp__everything__get-sum', arguments: { a: 1, b: 1 } }] },
      { text: 'done' },
    );
    const id = (await create({ message: 'approve MCP', autoExecute: false })).body.data.id;
    const pending = async () => (await h.api(`/api/v1/tasks/${id}`)).body.data.pendingApprovals as { callId: string; toolName: string }[];
    const first = await waitFor(async () => (await pending())[0]);
    expect(first.toolName).toBe('mcp__everything__echo');
    await h.api(`/api/v1/tasks/${id}/tools/${first.callId}/approve`, { method: 'POST', json: { outcome: 'proceed_always' } });
    // The second echo runs without asking; get-sum, another tool of the server, waits.
    const third = await waitFor(async () => (await pending())[0], 15_000, 'the get-sum approval');
    expect(third.toolName).toBe('mcp__everything__get-sum');
    await h.api(`/api/v1/tasks/${id}/tools/${third.callId}/approve`, { method: 'POST', json: { outcome: 'proceed_once' } });
    const events = await followStream(`${h.url}/api/v1/tasks/${id}/stream?after=0`, 'test-key-tenant-a', { timeoutMs: 30_000 });
    const calls = events.filter((e) => e.kind === 'tool_call').map((e) => [e.payload.data.toolName, e.payload.data.status]);
    expect(calls).toEqual([
      ['mcp__everything__echo', 'awaiting_approval'],
      ['mcp__everything__echo', 'approved'],
      ['mcp__everything__get-sum', 'awaiting_approval'],
    ]);
  });

  it('refuses a task’s stdio server, a bad server name, and a header secret the task lacks, with VALIDATION_ERROR', async () => {
    for (const mcpServers of [
      { local: { command: 'sh' } },
      { 'bad name': { url: remote.url } },
      { x: { url: remote.url, headers: { A: '{{secrets.NOPE}}' } } },
    ]) {
      const res = await create({ message: 'x', mcpServers });
      expect({ mcpServers, status: res.status, code: res.body.error?.code }).toEqual({ mcpServers, status: 400, code: 'VALIDATION_ERROR' });
    }
  });

  it('refuses a task’s own server on a private address not allowed by MCP_ALLOW_HOSTS: the tool is left out, and the caller is told why', async () => {
    h.model.script({ text: 'no tools needed' });
    // A working server, reached by a name that resolves to loopback: only 127.0.0.1:<port> is allowed.
    const id = (await create({ message: 'private', mcpServers: { internal: { url: `http://localhost:${remote.port}/mcp` } } })).body.data
      .id;
    const events = await followStream(`${h.url}/api/v1/tasks/${id}/stream`, 'test-key-tenant-a', {
      timeoutMs: 30_000,
      kinds: ['notice', 'done'],
    });
    const offered = (h.model.requests.at(-1)!.tools ?? []).map((t) => t.function?.name as string);
    expect(offered.some((name) => name.startsWith('mcp__internal__'))).toBe(false);
    expect(offered).toContain('mcp__everything__echo');
    const notice = events.find((e) => e.kind === 'notice')?.payload.data;
    expect(notice).toMatchObject({ code: 'MCP_SERVER_UNAVAILABLE', server: 'internal' });
    expect(notice?.message).toMatch(
      /^MCP server "internal" is unavailable, so its tools are left out: .*localhost is not a public address.*MCP_ALLOW_HOSTS/,
    );
    const view = (await h.api(`/api/v1/tasks/${id}`)).body.data;
    expect(view.notices).toEqual([notice?.message]);
  });
});
