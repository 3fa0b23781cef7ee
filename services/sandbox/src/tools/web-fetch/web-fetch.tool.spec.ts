import { createWebFetchTool } from './web-fetch.tool';
import { webFetchConfigFromEnv } from './web-fetch.config';

// Every URL here is refused before a socket is opened; the short timeout makes a regression fail fast.
const tool = createWebFetchTool(webFetchConfigFromEnv({ WEB_FETCH_TIMEOUT_MS: '500' }));
const run = (args: Record<string, unknown>) => tool.execute(args, { workspaceRoot: '/nonexistent' });

describe('web_fetch (no network)', () => {
  it('describes itself to the model with a url-only schema', () => {
    expect(tool.name).toBe('web_fetch');
    expect(tool.parameters).toEqual({
      type: 'object',
      properties: { url: { type: 'string', description: expect.any(String) } },
      required: ['url'],
      additionalProperties: false,
    });
    expect(tool.description).toContain('public');
  });

  it('answers missing, unknown or malformed arguments with an error result', async () => {
    await expect(run({})).resolves.toEqual({ status: 'error', output: 'invalid arguments: missing required argument "url" (string)' });
    await expect(run({ url: 'https://a.example', path: 'x' })).resolves.toMatchObject({
      status: 'error',
      output: expect.stringContaining('unknown argument "path"'),
    });
    await expect(run({ url: 'example.com/page' })).resolves.toMatchObject({
      status: 'error',
      output: expect.stringContaining('must be an absolute URL'),
    });
  });

  it('refuses schemes other than http and https', async () => {
    await expect(run({ url: 'file:///etc/passwd' })).resolves.toEqual({
      status: 'error',
      output: 'refused: file URLs are not fetched; only http and https',
    });
    await expect(run({ url: 'ftp://ftp.example/x' })).resolves.toMatchObject({
      status: 'error',
      output: expect.stringContaining('ftp URLs are not fetched'),
    });
  });

  it('refuses URLs that carry credentials', async () => {
    await expect(run({ url: 'https://user:secret@example.com/' })).resolves.toMatchObject({
      status: 'error',
      output: expect.stringContaining('credentials'),
    });
  });

  it.each([
    ['http://169.254.169.254/latest/meta-data/', 'refused: 169.254.169.254 is the cloud metadata address'],
    ['http://[fd00:ec2::254]/', 'refused: fd00:ec2::254 is the cloud metadata address'],
    ['http://0x7f.1:8080/', 'refused: 127.0.0.1 is a loopback address'],
    ['http://[::ffff:127.0.0.1]/', 'refused: ::ffff:7f00:1 is a loopback address'],
    ['https://10.0.0.5/', 'refused: 10.0.0.5 is a private address'],
    ['http://100.100.100.200/', 'refused: 100.100.100.200 is a carrier-grade NAT (shared) address'],
    ['http://0.0.0.0:80/', 'refused: 0.0.0.0 is an unspecified ("this network") address'],
  ])('refuses the IP literal in %s', async (url, message) => {
    const result = await run({ url });
    expect(result.status).toBe('error');
    expect(result.output.startsWith(message)).toBe(true);
  });

  it('reports a call cancelled before it starts', async () => {
    const signal = AbortSignal.abort();
    await expect(tool.execute({ url: 'https://example.com/' }, { workspaceRoot: '/', signal })).resolves.toEqual({
      status: 'error',
      output: 'cancelled before it finished',
    });
  });
});
