import type { Server } from 'node:net';
import { createServer } from 'node:net';
import type { AtsClient, AtsError, TaskStreamEvent } from '@agentic-task-service/client';
import type { Harness } from '../../../test/support/service-harness';
import { startHarness, waitFor } from '../../../test/support/service-harness';

// The shell tool through the whole service, in the real bubblewrap sandbox: env, exit codes,
// limits reported in the tool result, network off, and artifacts recorded as events and
// downloaded from the object store, no more of them than SANDBOX_DISK_QUOTA_BYTES.

jest.setTimeout(60_000);

/** Small enough that two 10M files pass it; each command's files are also capped at it (RLIMIT_FSIZE). */
const QUOTA = 16 * 1024 * 1024;

describe('shell tool and artifacts (bubblewrap)', () => {
  let h: Harness;
  let ats: AtsClient;
  beforeAll(async () => {
    h = await startHarness({
      SANDBOX_TIMEOUT_MS: '3000',
      SANDBOX_MAX_OUTPUT_BYTES: '65536',
      SANDBOX_MAX_PROCESSES: '64',
      SANDBOX_DISK_QUOTA_BYTES: String(QUOTA),
    });
    ats = h.client();
  });
  afterAll(async () => h.close());

  let lastTaskId = '';
  /** Creates a task whose model runs `commands` one by one, and follows it to its `done`. */
  const run = async (commands: string[], input: { env?: Record<string, string> } = {}): Promise<TaskStreamEvent[]> => {
    h.model.script(...commands.map((command) => ({ toolCalls: [{ name: 'shell', arguments: { command } }] })), { text: 'done' });
    const created = await ats.tasks.create({ message: 'run it', ...input });
    expect(created).toEqual({ id: expect.stringMatching(/^task_/), status: 'pending' });
    lastTaskId = created.id;
    const events: TaskStreamEvent[] = [];
    for await (const event of ats.tasks.stream(created.id)) events.push(event);
    return events;
  };
  const results = (events: TaskStreamEvent[]) => events.flatMap((e) => (e.type === 'tool_result' ? [e.data] : []));

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
    expect(events.at(-1)).toMatchObject({ type: 'done', data: { status: 'completed' } });
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
    const artifacts = events.flatMap((e) => (e.type === 'artifact' ? [e.data] : []));
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
    const files = await waitFor(async () => {
      const listed = await ats.artifacts.list(id);
      return listed.length === 1 ? listed : undefined;
    });
    expect(files).toEqual([
      { name: 'data.csv', path: 'downloads/sub/data.csv', size: 8, category: 'csv', mimeType: 'text/csv', modifiedAt: expect.any(String) },
    ]);
    const download = await ats.artifacts.download(id, 'downloads/sub/data.csv');
    expect(download.contentType).toBe('text/csv');
    expect(new TextDecoder().decode(download.body)).toBe('a,b\n1,2\n');
    // downloads/link leads out of the workspace (to /etc/hostname): outside, like `..`.
    for (const [path, code, status] of [
      ['downloads/link', 'VALIDATION_ERROR', 400],
      ['../../etc/passwd', 'VALIDATION_ERROR', 400],
      ['/etc/passwd', 'VALIDATION_ERROR', 400],
      ['downloads/r.md', 'NOT_FOUND', 404],
      ['downloads/nothing.txt', 'NOT_FOUND', 404],
    ] as const) {
      const error = await ats.artifacts.download(id, path).then(
        () => undefined,
        (e: AtsError) => e,
      );
      expect({ path, code: error?.code, status: error?.status }).toEqual({ path, code, status });
    }
  });

  it('downloads a file named with a backslash as the listing gives it, and still reads a backslash path that climbs out as outside', async () => {
    await run(['mkdir -p downloads && printf "odd\\n" > "downloads/a\\\\b.txt" && ls downloads']);
    const id = lastTaskId;
    const files = await waitFor(async () => {
      const listed = await ats.artifacts.list(id);
      return listed.length === 1 ? listed : undefined;
    });
    expect(files.map((f) => [f.path, f.name])).toEqual([['downloads/a\\b.txt', 'a\\b.txt']]);
    const download = await ats.artifacts.download(id, files[0].path);
    expect(new TextDecoder().decode(download.body)).toBe('odd\n');
    // Not a recorded name: read as a path with Windows separators.
    await expect(ats.artifacts.download(id, 'downloads\\..\\..\\x')).rejects.toMatchObject({ status: 400, code: 'VALIDATION_ERROR' });
  });

  it('stores artifacts up to SANDBOX_DISK_QUOTA_BYTES at their apparent size, and the tool result names each file left out', async () => {
    // Sparse files: a few KB of the workspace each, 10M each for the artifact store.
    const events = await run([
      'mkdir -p downloads && for f in kept over; do truncate -s 10M downloads/$f.bin && echo $f >> downloads/$f.bin; done',
      'truncate -s 10M downloads/later.bin && echo later >> downloads/later.bin && echo ok > downloads/ok.txt',
    ]);
    const [made, madeLater] = results(events);
    const leftOut = (path: string, size: number) =>
      `[artifacts: ${path} (${size} bytes) is not stored: the task's artifacts would pass SANDBOX_DISK_QUOTA_BYTES (${QUOTA} bytes`;
    expect(made.output).toContain(leftOut('downloads/over.bin', 10 * 1024 * 1024 + 5));
    expect(made.output).not.toContain('downloads/kept.bin');
    // The allowance is the task's, not the call's: kept.bin still counts.
    expect(madeLater.output).toContain(leftOut('downloads/later.bin', 10 * 1024 * 1024 + 6));
    const artifacts = events.flatMap((e) => (e.type === 'artifact' ? [[e.data.path, e.data.status]] : []));
    expect(artifacts).toEqual([
      ['downloads/kept.bin', 'recorded'],
      ['downloads/ok.txt', 'recorded'],
    ]);
  });
});
