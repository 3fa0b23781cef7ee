import type { AtsClient, TaskStreamEvent } from '@agentic-task-service/client';
import type { Harness } from '../../../test/support/service-harness';
import { API_KEY, OTHER_API_KEY, startHarness } from '../../../test/support/service-harness';

// Time travel over a task's files (docs/api.md "Time travel"): each tool_result says what its
// step changed, and the workspace can be listed and downloaded as it was right after any event,
// from the checkpoints in the object store, whatever became of the sandbox since.

jest.setTimeout(60_000);

describe('time travel: changes per step, files as of any event', () => {
  let h: Harness;
  let ats: AtsClient;
  beforeAll(async () => {
    h = await startHarness({ SANDBOX_IDLE_TTL_MS: '400' });
    ats = h.client();
  });
  afterAll(async () => h.close());

  const followTurn = async (id: string, after?: number): Promise<(TaskStreamEvent & { id?: number })[]> => {
    const events: TaskStreamEvent[] = [];
    for await (const event of ats.tasks.stream(id, after === undefined ? {} : { after })) events.push(event);
    return events;
  };
  const filesAt = async (id: string, at?: number, extra = '') =>
    h.api(`/api/v1/tasks/${id}/files?${at === undefined ? '' : `at=${at}`}${extra}`);
  const download = async (id: string, path: string, at?: number) => {
    const res = await fetch(
      `${h.url}/api/v1/tasks/${id}/files/download?path=${encodeURIComponent(path)}${at === undefined ? '' : `&at=${at}`}`,
      { headers: { authorization: `Bearer ${API_KEY}` } },
    );
    return { status: res.status, text: await res.text(), headers: res.headers };
  };

  it('reports each step’s changes and serves the files of three different events as they were then', async () => {
    h.model.script(
      { toolCalls: [{ name: 'shell', arguments: { command: 'echo one > a.txt' } }] },
      { toolCalls: [{ name: 'shell', arguments: { command: 'echo two > a.txt && mkdir d && echo x > d/x.txt' } }] },
      { toolCalls: [{ name: 'read_file', arguments: { path: 'a.txt' } }] },
      { toolCalls: [{ name: 'shell', arguments: { command: 'rm d/x.txt && echo three > a.txt' } }] },
      { text: 'done' },
    );
    const { id } = await ats.tasks.create({ message: 'write, change, delete' });
    await followTurn(id);
    const history = (await h.api(`/api/v1/tasks/${id}/events?limit=1000`)).body.data.events as { id: number; type: string; data: any }[];
    const results = history.filter((e) => e.type === 'tool_result');
    expect(results.map((r) => r.data.changes)).toEqual([
      [{ path: 'a.txt', change: 'created', size: 4 }],
      [
        { path: 'a.txt', change: 'modified', size: 4 },
        { path: 'd/x.txt', change: 'created', size: 2 },
      ],
      undefined,
      [
        { path: 'a.txt', change: 'modified', size: 6 },
        { path: 'd/x.txt', change: 'deleted', size: 2 },
      ],
    ]);
    // Internal: where the checkpoint is stored is never shown.
    for (const r of results) expect(r.data).not.toHaveProperty('checkpoint');

    const [first, second, , fourth] = results.map((r) => r.id);
    const listed = async (at?: number) => ((await filesAt(id, at)).body.data.files as { path: string }[]).map((f) => f.path);
    expect(await listed(1)).toEqual([]);
    expect(await listed(first)).toEqual(['a.txt']);
    expect(await listed(second)).toEqual(['a.txt', 'd/x.txt']);
    expect(await listed(second + 1)).toEqual(['a.txt', 'd/x.txt']);
    expect(await listed(fourth)).toEqual(['a.txt']);
    expect(await listed()).toEqual(['a.txt']);
    expect((await filesAt(id, first)).body.data).toEqual({
      at: first,
      files: [{ path: 'a.txt', size: 4, sha256: expect.stringMatching(/^[0-9a-f]{64}$/) }],
      nextCursor: null,
    });
    expect((await download(id, 'a.txt', first)).text).toBe('one\n');
    expect((await download(id, 'a.txt', second)).text).toBe('two\n');
    expect((await download(id, 'd/x.txt', second)).text).toBe('x\n');
    const now = await download(id, 'a.txt');
    expect(now).toMatchObject({ status: 200, text: 'three\n' });
    expect(now.headers.get('content-disposition')).toMatch(/^attachment; filename="a.txt"/);
    expect(now.headers.get('x-content-type-options')).toBe('nosniff');
    expect((await download(id, 'd/x.txt', fourth)).status).toBe(404);

    // Unknown events and paths are 404; malformed input 400; another tenant sees nothing.
    expect((await filesAt(id, 100_000)).status).toBe(404);
    expect((await filesAt(id, undefined, 'at=0')).status).toBe(400);
    expect((await h.api(`/api/v1/tasks/${id}/files?at=x`)).body.error.code).toBe('VALIDATION_ERROR');
    expect((await download(id, '../etc/passwd', second)).status).toBe(404);
    expect((await h.api(`/api/v1/tasks/${id}/files`, { key: OTHER_API_KEY })).status).toBe(404);
  });

  it('masks a secret in a path wherever it shows (changes, the list), and downloads the file by its masked path', async () => {
    const secret = 'sekrit-value-4711';
    h.model.script({ toolCalls: [{ name: 'shell', arguments: { command: 'echo hidden > "f-$TOKEN.txt"' } }] }, { text: 'done' });
    const { id } = await ats.tasks.create({ message: 'name a file after a secret', secrets: { TOKEN: secret } });
    const events = await followTurn(id);
    const result = events.find((e) => e.type === 'tool_result')!;
    const masked = 'f-[REDACTED:TOKEN].txt';
    expect(result.type === 'tool_result' && result.data.changes).toEqual([{ path: masked, change: 'created', size: 7 }]);
    const listed = await filesAt(id);
    expect(JSON.stringify(listed.body)).not.toContain(secret);
    expect(listed.body.data.files.map((f: { path: string }) => f.path)).toEqual([masked]);
    expect(await download(id, masked)).toMatchObject({ status: 200, text: 'hidden\n' });
    expect((await download(id, `f-${secret}.txt`)).status).toBe(404);
  });

  it('checkpoints the uploads with the task: they are the files of event 1, and no step reports them as its own', async () => {
    h.model.script({ toolCalls: [{ name: 'shell', arguments: { command: 'printf "c,d\\n" >> data.csv' } }] }, { text: 'done' });
    const { id } = await ats.tasks.create({ message: 'double the data', files: [{ name: 'data.csv', content: 'a,b\n' }] });
    const events = await followTurn(id);
    expect(((await filesAt(id, 1)).body.data.files as { path: string }[]).map((f) => [f.path, (f as { size?: number }).size])).toEqual([
      ['data.csv', 4],
    ]);
    const result = events.find((e) => e.type === 'tool_result')!;
    expect(result.type === 'tool_result' && result.data.changes).toEqual([{ path: 'data.csv', change: 'modified', size: 8 }]);
    expect((await download(id, 'data.csv', 1)).text).toBe('a,b\n');
  });

  it('forks with the files of the fork point: after a tool_result and after a done; the source keeps its events and files', async () => {
    h.model.script(
      { toolCalls: [{ name: 'shell', arguments: { command: 'echo v1 > f.txt' } }] },
      { toolCalls: [{ name: 'shell', arguments: { command: 'echo v2 > f.txt && echo new > g.txt' } }] },
      { text: 'done' },
    );
    const { id } = await ats.tasks.create({ message: 'two versions' });
    await followTurn(id);
    const sourceEvents = (await h.api(`/api/v1/tasks/${id}/events?limit=1000`)).body.data.events as { id: number; type: string }[];
    const [first] = sourceEvents.filter((e) => e.type === 'tool_result').map((e) => e.id);
    const done = sourceEvents.at(-1)!.id;
    const sourceFiles = (await filesAt(id)).body.data.files;

    // After the first tool_result: the turn goes on, in the workspace as it was then.
    h.model.script(
      { toolCalls: [{ name: 'shell', arguments: { command: 'cat f.txt; test -e g.txt && echo has-g || echo no-g' } }] },
      { text: 'forked' },
    );
    const early = await ats.tasks.fork(id, { afterEventId: first });
    const earlyEvents = await followTurn(early.id, first);
    const earlyResult = earlyEvents.find((e) => e.type === 'tool_result')?.data as { output: string; changes?: unknown };
    expect(earlyResult.output).toBe('v1\nno-g\n');
    expect(earlyResult.changes).toBeUndefined();
    expect((await filesAt(early.id, first)).body.data.files).toEqual((await filesAt(id, first)).body.data.files);

    // After the done, with a message: a new turn, in the workspace as the source's turn left it.
    h.model.script({ toolCalls: [{ name: 'shell', arguments: { command: 'cat f.txt g.txt && echo third > h.txt' } }] }, { text: 'more' });
    const late = await ats.tasks.fork(id, { afterEventId: done, message: 'go on' });
    const lateEvents = await followTurn(late.id, done);
    const lateResult = lateEvents.find((e) => e.type === 'tool_result')?.data as { output: string; changes?: unknown };
    expect(lateResult.output).toBe('v2\nnew\n');
    expect(lateResult.changes).toEqual([{ path: 'h.txt', change: 'created', size: 6 }]);
    expect((await download(late.id, 'h.txt')).text).toBe('third\n');

    // The source never changed: the same events (its idle sandbox may have expired meanwhile, as
    // SANDBOX_IDLE_TTL_MS is short here: nothing else), the same files.
    const after = (await h.api(`/api/v1/tasks/${id}/events?limit=1000`)).body.data.events as { id: number; type: string }[];
    expect(after.filter((e) => e.type !== 'sandbox').map((e) => [e.id, e.type])).toEqual(
      sourceEvents.filter((e) => e.type !== 'sandbox').map((e) => [e.id, e.type]),
    );
    expect((await filesAt(id)).body.data.files).toEqual(sourceFiles);
    expect((await download(id, 'h.txt')).status).toBe(404);
  });

  it('pages through many files with an opaque cursor, each file once', async () => {
    h.model.script(
      {
        toolCalls: [
          { name: 'shell', arguments: { command: 'mkdir -p p/q && for i in $(seq 1 25); do echo $i > p/f$i; echo $i > p/q/g$i; done' } },
        ],
      },
      { text: 'done' },
    );
    const { id } = await ats.tasks.create({ message: 'many files' });
    await followTurn(id);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { status: number; body: any } = await h.api(
        `/api/v1/tasks/${id}/files?limit=7${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      );
      expect(page.status).toBe(200);
      expect(page.body.data.files.length).toBeLessThanOrEqual(7);
      seen.push(...page.body.data.files.map((f: { path: string }) => f.path));
      cursor = page.body.data.nextCursor;
    } while (cursor);
    expect(seen).toHaveLength(50);
    expect(new Set(seen).size).toBe(50);
    expect((await h.api(`/api/v1/tasks/${id}/files?cursor=not-a-cursor!`)).status).toBe(400);
  });

  it('still serves every step after the sandbox expired, and a follow-up finds the files', async () => {
    h.model.script({ toolCalls: [{ name: 'shell', arguments: { command: 'echo kept > kept.txt' } }] }, { text: 'done' });
    const { id } = await ats.tasks.create({ message: 'write then idle' });
    await followTurn(id);
    const expired = async () => (await ats.tasks.get(id)).sandbox === 'expired';
    for (const until = Date.now() + 15_000; !(await expired());) {
      if (Date.now() > until) throw new Error('the sandbox did not expire');
      await new Promise((r) => setTimeout(r, 100));
    }
    expect((await download(id, 'kept.txt')).text).toBe('kept\n');
    h.model.script({ toolCalls: [{ name: 'shell', arguments: { command: 'cat kept.txt' } }] }, { text: 'read' });
    const last = (await h.api(`/api/v1/tasks/${id}`)).body.data.lastEventId as number;
    await ats.tasks.sendMessage(id, 'read it back');
    const events = await followTurn(id, last);
    expect(events.find((e) => e.type === 'tool_result')?.data).toMatchObject({ status: 'success', output: 'kept\n' });
  });
});
