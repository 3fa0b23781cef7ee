import { mcpSettingsFromEnv } from './mcp.config';

describe('mcpSettingsFromEnv', () => {
  it('has no servers and sane bounds by default', () =>
    expect(mcpSettingsFromEnv({})).toEqual({
      servers: {},
      limits: { connectTimeoutMs: 15_000, callTimeoutMs: 120_000, maxOutputChars: 100_000 },
      allowHosts: new Set(),
    }));
  it('reads MCP_SERVERS and MCP_ALLOW_HOSTS', () => {
    const settings = mcpSettingsFromEnv({
      MCP_SERVERS: '{"fs":{"command":"mcp-fs","args":["/data"]}}',
      MCP_ALLOW_HOSTS: '127.0.0.1:8080, mcp.internal:443',
    });
    expect(settings.servers).toEqual({ fs: { kind: 'stdio', command: 'mcp-fs', args: ['/data'], env: {}, mounts: [], network: true } });
    expect([...settings.allowHosts]).toEqual(['127.0.0.1:8080', 'mcp.internal:443']);
  });
  it('names MCP_ALLOW_HOSTS in a bad entry', () =>
    expect(() => mcpSettingsFromEnv({ MCP_ALLOW_HOSTS: 'no-port' })).toThrow(/MCP_ALLOW_HOSTS entry "no-port"/));
  it('stops at start-up on JSON it cannot read', () =>
    expect(() => mcpSettingsFromEnv({ MCP_SERVERS: '{fs:' })).toThrow(/MCP_SERVERS is not valid JSON/));
  it('stops at start-up on a bad server', () =>
    expect(() => mcpSettingsFromEnv({ MCP_SERVERS: '{"a b":{"url":"http://x"}}' })).toThrow(/server name "a b"/));
});
