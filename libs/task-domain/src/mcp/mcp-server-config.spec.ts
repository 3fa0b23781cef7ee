import { McpConfigError } from '../task.errors';
import { parseMcpServers, referencedSecrets, resolveHeaders } from './mcp-server-config';

const parse = (raw: unknown, allowStdio = true) => parseMcpServers(raw, { allowStdio, where: 'MCP_SERVERS' });

describe('parseMcpServers', () => {
  it('reads stdio and Streamable HTTP servers', () => {
    expect(
      parse({
        fs: { command: 'npx', args: ['-y', 'srv'], env: { A: '1' } },
        gh: { url: 'https://mcp.example.com/mcp', headers: { Authorization: 'Bearer {{secrets.GH}}' } },
      }),
    ).toEqual({
      fs: { kind: 'stdio', command: 'npx', args: ['-y', 'srv'], env: { A: '1' }, mounts: [], network: true },
      gh: { kind: 'http', url: 'https://mcp.example.com/mcp', headers: { Authorization: 'Bearer {{secrets.GH}}' } },
    });
  });
  it('reads a stdio server’s read-only mounts and network choice', () =>
    expect(parse({ fs: { command: 'node', args: ['/opt/fs/index.js'], mounts: ['/opt/fs'], network: false } }).fs).toMatchObject({
      mounts: ['/opt/fs'],
      network: false,
    }));
  it('is empty when nothing is configured', () => expect(parse(undefined)).toEqual({}));
  it.each([
    [{ a__b: { url: 'http://x' } }, /server name "a__b"/],
    [{ 'a.b': { url: 'http://x' } }, /server name "a.b"/],
    [{ x: { url: 'ftp://x' } }, /must be http\(s\)/],
    [{ x: { url: 'https://user:pw@x' } }, /must not carry credentials/],
    [{ x: { url: 'http://x', headers: { A: 1 } } }, /headers must be an object of strings/],
    [{ x: { command: '' } }, /command must be a non-empty string/],
    [{ x: { command: 'a', args: [1] } }, /args must be an array of strings/],
    [{ x: {} }, /needs either url/],
    [{ x: { command: 'a', mounts: ['relative/path'] } }, /mounts must be an array of absolute, normalised host paths other than \//],
    [{ x: { command: 'a', mounts: ['/opt/../etc'] } }, /mounts must be/],
    [{ x: { command: 'a', mounts: ['/'] } }, /mounts must be/],
    [{ x: { command: 'a', mounts: ['/opt//x'] } }, /mounts must be/],
    [{ x: { command: 'a', mounts: ['/opt/x/'] } }, /mounts must be/],
    [{ x: { command: 'a', network: 'yes' } }, /network must be true or false/],
    [[], /must be an object/],
  ])('refuses %j', (raw, message) => expect(() => parse(raw)).toThrow(message));
  it('refuses stdio servers where only HTTP is allowed (a task’s own)', () =>
    expect(() => parseMcpServers({ x: { command: 'sh' } }, { allowStdio: false, where: 'mcpServers' })).toThrow(McpConfigError));
  it('refuses more than ten servers', () =>
    expect(() => parse(Object.fromEntries(Array.from({ length: 11 }, (_, i) => [`s${i}`, { url: 'http://x' }])))).toThrow(/at most 10/));
});

describe('secret references in headers', () => {
  const server = {
    kind: 'http' as const,
    url: 'http://x',
    headers: { Authorization: 'Bearer {{secrets.TOKEN}}', 'X-Two': '{{ secrets.A }}-{{secrets.B}}' },
  };
  it('lists the secrets a server references', () => expect(referencedSecrets(server).sort()).toEqual(['A', 'B', 'TOKEN']));
  it('fills them in', () =>
    expect(resolveHeaders(server.headers, { TOKEN: 't', A: '1', B: '2' })).toEqual({ Authorization: 'Bearer t', 'X-Two': '1-2' }));
  it('names a secret the task lacks', () =>
    expect(() => resolveHeaders(server.headers, { TOKEN: 't' })).toThrow(/secret A, which this task does not have/));
});
