import { createServer, Server } from 'node:net';
import { Harness, startHarness, waitFor } from '../../../test/support/service-harness';
import { followStream, SseEvent } from '../../../test/support/sse-client';

// The shell tool through the whole service, in the real bubblewrap sandbox: env, exit codes,
// limits reported in the tool result, network off, and artifacts recorded as events and
// downloaded from the object store.

const KINDS = ['message', 'status', 'usage', 'content', 'tool_call', 'tool_started', 'tool_result', 'artifact', 'done'];

jest.setTimeout(60_000);

describe('shell tool and artifacts (bubblewrap)', () => {
  let h: Harness;
  beforeAll(
    async () => (h = await startHarness({ SANDBOX_TIMEOUT_MS: '3000', SANDBOX_MAX_OUTPUT_BYTES: '65536', SANDBOX_MAX_PROCESSES: '64' })),
  );
  afterAll(async () => h.close());

  let lastTaskId = '';
  const run = async (commands: string[], body: Record<string, unknown> = {}): Promise<SseEvent[]> => {
    h.model.script(...commands.map((command) => ({ toolCalls: [{ name: 'shell', arguments: { command } }] })), { text: 'done' });
    const res = await h.api('/api/v1/tasks', { method: 'POST', json: { message: 'run it', ...body } });
    expect(res.status).toBe(201);
    lastTaskId = res.body.data.id;
    return followStream(`${h.url}/api/v1/tasks/${res.body.data.id}/stream`, 'test-key-tenant-a', { kinds: KINDS, timeoutMs: 30_000 });
  };
  const results = (events: SseEvent[]) => events.filter((e) => e.kind === 'tool_result').map((e) => e.payload.data as Record<string, any>);

  it('runs bash -lc in the workspace with the task env, reporting exit code and duration', async () => {
    const [ok, failed] = results(
      await run(['echo "region=$REGION cwd=$(pwd) home=$HOME"; echo to-stderr >&2', 'exit 3'], { env: { REGION: 'eu-west' } }),
    );
    expect(ok).toMatchObject({ toolName: 'shell', status: 'success', exitCode: 0, durationMs: expect.any(Number) });
    expect(ok.output).toContain('region=eu-west cwd=/workspace home=/workspace');
    expect(ok.output).toContain('to-stderr');
    expect(failed).toMatchObject({ status: 'error', exitCode: 3 });
  });

  it('reports a timeout, an output flood and a fork bomb as limits, and the task goes on', async () => {
    const events = await run(['sleep 60', 'head -c 100000000 /dev/zero | tr "\\0" a', ':(){ :|:& };:; sleep 2']);
    const [slept, flood, bomb] = results(events);
    expect(slept).toMatchObject({ status: 'error' });
    expect(slept.output).toMatch(/limit hit: .*3000 ms/);
    expect(flood.output).toContain('[output truncated');
    expect(flood.output.length).toBeLessThan(70_000);
    expect(bomb.status).toBe('error');
    expect(bomb.output).toMatch(/limit hit/);
    expect(events.at(-1)?.payload.data).toMatchObject({ status: 'completed' });
  });

  it('has no network by default: the API port on 127.0.0.1 is unreachable from inside', async () => {
    const server: Server = createServer((socket) => socket.end('hello from the host\n'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as { port: number }).port;
    const apiPort = new URL(h.url).port;
    try {
      const [host, api] = results(
        await run([
          `exec 3<>/dev/tcp/127.0.0.1/${port} && cat <&3`,
          `curl -sS --max-time 2 http://127.0.0.1:${apiPort}/healthz || exec 3<>/dev/tcp/127.0.0.1/${apiPort}`,
        ]),
      );
      expect(host.status).toBe('error');
      expect(host.output).not.toContain('hello from the host');
      expect(api.status).toBe('error');
      expect(api.output).not.toContain('"status"');
    } finally {
      server.close();
    }
  });

  it('records files under downloads/ as artifact events and serves them from the object store', async () => {
    const events = await run([
      'mkdir -p downloads/sub && printf "a,b\\n1,2\\n" > downloads/sub/data.csv && echo "# hi" > downloads/r.md && ln -s /etc/hostname downloads/link',
      'rm downloads/r.md',
    ]);
    const artifacts = events.filter((e) => e.kind === 'artifact').map((e) => e.payload.data);
    expect(artifacts).toEqual([
      expect.objectContaining({
        path: 'downloads/r.md',
        name: 'r.md',
        size: 5,
        category: 'markdown',
        status: 'recorded',
        sha256: expect.stringMatching(/^[a-f0-9]{64}$/),
      }),
      expect.objectContaining({ path: 'downloads/sub/data.csv', category: 'csv', mimeType: 'text/csv', status: 'recorded' }),
      expect.objectContaining({ path: 'downloads/r.md', status: 'removed' }),
    ]);
    for (const a of artifacts) expect(a).not.toHaveProperty('objectKey');
    const id = lastTaskId;
    const list = await waitFor(async () => {
      const body = (await h.api(`/api/v1/tasks/${id}/artifacts`)).body;
      return body.files?.length === 1 ? body : undefined;
    });
    expect(list.files).toEqual([
      { name: 'data.csv', path: 'downloads/sub/data.csv', size: 8, category: 'csv', mimeType: 'text/csv', modifiedAt: expect.any(String) },
    ]);
    const download = await fetch(`${h.url}/api/v1/tasks/${id}/artifacts/download?path=downloads/sub/data.csv`, {
      headers: { authorization: 'Bearer test-key-tenant-a' },
    });
    expect(download.status).toBe(200);
    expect(download.headers.get('content-type')).toBe('text/csv');
    expect(await download.text()).toBe('a,b\n1,2\n');
    // downloads/link leads out of the workspace (to /etc/hostname): outside, like `..`.
    for (const [path, status] of [
      ['downloads/link', 400],
      ['../../etc/passwd', 400],
      ['/etc/passwd', 400],
      ['downloads/r.md', 404],
      ['downloads/nothing.txt', 404],
    ] as const) {
      const res = await h.api(`/api/v1/tasks/${id}/artifacts/download?path=${encodeURIComponent(path)}`);
      expect({ path, status: res.status }).toEqual({ path, status });
    }
  });
});
