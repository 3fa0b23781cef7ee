import type { Harness } from '../../../test/support/service-harness';
import { startHarness, waitFor } from '../../../test/support/service-harness';
import { followStream, readRawStream } from '../../../test/support/sse-client';

// A secret canary through every output path of the shell (plain, base64, URL-encoded, split
// across two output chunks, cut by the output limit, in an error), then a recursive search of
// everything the service persisted and logged finds nothing.

const CANARY = 'cnry-4b1d9e77-TOPSECRET';
const FORMS = [CANARY, Buffer.from(CANARY).toString('base64'), encodeURIComponent(CANARY)];

jest.setTimeout(60_000);

describe('secret canary through every shell output path', () => {
  let h: Harness;
  const logged: string[] = [];
  const writes = { out: process.stdout.write.bind(process.stdout), err: process.stderr.write.bind(process.stderr) };
  beforeAll(async () => {
    const capture = (original: typeof process.stdout.write) =>
      ((chunk: string | Uint8Array, ...rest: unknown[]) => {
        logged.push(String(chunk));
        return (original as (...args: unknown[]) => boolean)(chunk, ...rest);
      }) as typeof process.stdout.write;
    process.stdout.write = capture(writes.out);
    process.stderr.write = capture(writes.err);
    h = await startHarness({ SANDBOX_MAX_OUTPUT_BYTES: '4096', SANDBOX_IDLE_TTL_MS: '300' }, true, [
      'log',
      'warn',
      'error',
      'debug',
      'verbose',
    ]);
    // A distributed deployment (seven processes) may take longer than this suite's 60 s to start.
  }, 180_000);
  afterAll(async () => {
    process.stdout.write = writes.out;
    process.stderr.write = writes.err;
    await h.close();
  });

  it('never lets the value out', async () => {
    const commands = [
      'echo "plain=$API_TOKEN"',
      'printf %s "$API_TOKEN" | base64',
      'printf "%s" "$API_TOKEN" | jq -sRr @uri 2>/dev/null || python3 -c "import os,urllib.parse;print(urllib.parse.quote(os.environ[\'API_TOKEN\'], safe=\'\'))"',
      'printf %s "${API_TOKEN:0:9}"; sleep 0.3; printf %s "${API_TOKEN:9}"; echo',
      'head -c 4090 /dev/zero | tr "\\0" x; printf %s "$API_TOKEN"; echo',
      'mkdir -p downloads && echo report > downloads/r.txt && ls /nonexistent-$API_TOKEN',
    ];
    h.model.script(...commands.map((command) => ({ toolCalls: [{ name: 'shell', arguments: { command } }] })), {
      text: `finished, the token was ${CANARY}`,
    });
    const res = await h.api('/api/v1/tasks', { method: 'POST', json: { message: 'use the token', secrets: { API_TOKEN: CANARY } } });
    const id = res.body.data.id;
    const events = await followStream(`${h.url}/api/v1/tasks/${id}/stream`, 'test-key-tenant-a', { timeoutMs: 30_000 });
    const outputs = events.filter((e) => e.kind === 'tool_result').map((e) => String(e.payload.data.output));
    expect(outputs).toHaveLength(commands.length);
    expect(outputs[0]).toContain('plain=[REDACTED:API_TOKEN]');
    expect(outputs[1]).toContain('[REDACTED:API_TOKEN]');
    expect(outputs[2]).toContain('[REDACTED:API_TOKEN]');
    expect(outputs[3]).toContain('[REDACTED:API_TOKEN]');
    expect(outputs[4]).toMatch(/\[REDACTED:API_TOKEN\]|\[output truncated/);
    expect(outputs[5]).toContain('/nonexistent-[REDACTED:API_TOKEN]');
    expect(events.find((e) => e.kind === 'content')?.payload.data.text).toBe('finished, the token was [REDACTED:API_TOKEN]');

    const surfaces = [
      JSON.stringify((await h.api(`/api/v1/tasks/${id}`)).body),
      JSON.stringify((await h.api(`/api/v1/tasks/${id}/artifacts`)).body),
      (await readRawStream(`${h.url}/api/v1/tasks/${id}/stream?after=0`, { authorization: 'Bearer test-key-tenant-a' })).text,
      JSON.stringify(h.model.requests),
    ];
    for (const text of surfaces) for (const form of FORMS) expect(text).not.toContain(form);

    // Idle past SANDBOX_IDLE_TTL_MS, the workspace is archived into the object store and torn down:
    // the snapshot is then the only copy of the workspace, and it is searched too.
    await waitFor(
      async () => (await h.api(`/api/v1/tasks/${id}`)).body.data.sandbox === 'expired',
      15_000,
      'the idle workspace snapshotted',
    );
    // Every file the service wrote (distributed: also the event rows, objects, workflow histories
    // and each process's log), and this process's own output (all-in-one: the service's log).
    const persisted = await h.stopAndCollectPersisted();
    const logs = [
      { where: 'this process’s output', bytes: Buffer.from(logged.join('')) },
      ...persisted.filter((p) => p.where.startsWith('log of ')),
    ];
    expect(logs.some((l) => l.bytes.length > 0)).toBe(true);
    // The snapshot is among what is searched, and is the workspace as a plain tar (a canary in it
    // would show): the file the last command wrote is in it by name and content.
    const snapshots = persisted.filter((p) => new RegExp(`snapshots/${id}/[^/]+\\.tar$`).test(p.where));
    expect(snapshots.map((p) => p.where)).toEqual([expect.stringContaining(`snapshots/${id}/`)]);
    expect({ name: snapshots[0].bytes.includes('downloads/r.txt'), content: snapshots[0].bytes.includes('report\n') }).toEqual({
      name: true,
      content: true,
    });
    // Distributed: NATS keeps only the JetStream streams (the sandbox leases' bucket); they are searched too.
    if (process.env.ATS_E2E_MODE === 'distributed') expect(persisted.some((p) => p.where.startsWith('jetstream '))).toBe(true);
    for (const { where, bytes } of [...persisted, ...logs]) {
      for (const form of FORMS) expect({ where, form, leaked: bytes.includes(form) }).toEqual({ where, form, leaked: false });
    }
  });
});
