import { Harness, startHarness, waitFor } from '../../../test/support/service-harness';
import { followStream } from '../../../test/support/sse-client';

describe('A task from creation to artifacts and follow-ups', () => {
  let h: Harness;
  beforeAll(async () => (h = await startHarness()));
  afterAll(async () => h.close());

  const create = async (body: Record<string, unknown>) => {
    const res = await h.api('/api/v1/tasks', { method: 'POST', json: body });
    expect(res.status).toBe(201);
    return res.body.data.id as string;
  };
  const task = async (id: string) => (await h.api(`/api/v1/tasks/${id}`)).body.data;
  // One read per probe: reading twice could see pending, then running, and return a running task.
  const finished = (id: string) =>
    waitFor(async () => {
      const view = await task(id);
      return view.status === 'running' || view.status === 'pending' ? undefined : view;
    });

  it('returns pending at once, runs the agent, writes an artifact and streams every step', async () => {
    h.model.script(
      {
        toolCalls: [{ name: 'write_file', arguments: { path: 'downloads/report.md', content: '# Report\n\ntotal: 42\n' } }],
        usage: { inputTokens: 10, outputTokens: 5, totalTokens: 15 },
      },
      { text: 'I wrote downloads/report.md.', usage: { inputTokens: 20, outputTokens: 7, totalTokens: 27 } },
    );
    const res = await h.api('/api/v1/tasks', { method: 'POST', json: { message: 'Write a report', env: { REGION: 'eu' } } });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ success: true, data: { id: expect.stringMatching(/^task_/), status: 'pending' } });
    const id = res.body.data.id;

    const kinds = ['message', 'status', 'usage', 'tool_call', 'tool_started', 'tool_result', 'artifact', 'content', 'done'];
    const events = await followStream(`${h.url}/api/v1/tasks/${id}/stream`, 'test-key-tenant-a', { kinds });
    expect(events.map((e) => e.kind)).toEqual([
      'message',
      'status',
      'usage',
      'tool_call',
      'tool_started',
      'tool_result',
      'artifact',
      'usage',
      'content',
      'done',
    ]);
    expect(events.map((e) => e.id)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    for (const e of events) expect(e.payload.type).toBe(e.kind);
    const call = events[3].payload.data;
    expect(call).toEqual({
      callId: expect.stringMatching(/^call_/),
      toolName: 'write_file',
      status: 'approved',
      args: { path: 'downloads/report.md', content: '# Report\n\ntotal: 42\n' },
    });
    expect(events[5].payload.data).toMatchObject({
      callId: call.callId,
      toolName: 'write_file',
      status: 'success',
      output: expect.any(String),
      durationMs: expect.any(Number),
    });
    expect(events[6].payload.data).toMatchObject({ path: 'downloads/report.md', size: 20, status: 'recorded', callId: call.callId });
    expect(events[8].payload.data).toEqual({ text: 'I wrote downloads/report.md.' });
    expect(events[9].payload.data).toMatchObject({ status: 'completed' });

    const view = await task(id);
    expect(view).toMatchObject({
      id,
      status: 'completed',
      autoExecute: true,
      showInHistory: true,
      pendingApprovals: [],
      usage: { inputTokens: 30, outputTokens: 12, totalTokens: 42 },
      envKeys: ['REGION'],
      messages: [{ text: 'Write a report' }],
    });
    expect(JSON.stringify(view)).not.toContain('"eu"');
    expect(Date.parse(view.createdAt)).not.toBeNaN();

    const artifacts = await h.api(`/api/v1/tasks/${id}/artifacts`);
    expect(artifacts.status).toBe(200);
    expect(artifacts.body).toEqual({
      files: [
        {
          name: 'report.md',
          path: 'downloads/report.md',
          size: 20,
          category: 'markdown',
          mimeType: 'text/markdown',
          modifiedAt: expect.any(String),
        },
      ],
    });
    const download = await fetch(`${h.url}/api/v1/tasks/${id}/artifacts/download?path=downloads/report.md`, {
      headers: { authorization: 'Bearer test-key-tenant-a' },
    });
    expect(download.status).toBe(200);
    expect(download.headers.get('content-type')).toBe('text/markdown');
    expect(download.headers.get('content-disposition')).toContain('attachment; filename="report.md"');
    expect(await download.text()).toBe('# Report\n\ntotal: 42\n');
  });

  it('keeps the context for a follow-up and replays only the latest turn by default', async () => {
    h.model.script({ toolCalls: [{ name: 'write_file', arguments: { path: 'notes.txt', content: 'alpha' } }] }, { text: 'Saved.' });
    const id = await create({ message: 'Remember alpha in notes.txt' });
    await followStream(`${h.url}/api/v1/tasks/${id}/stream`, 'test-key-tenant-a');

    h.model.script({ toolCalls: [{ name: 'read_file', arguments: { path: 'notes.txt' } }] }, { text: 'It says alpha.' });
    const before = h.model.requests.length;
    const follow = await h.api(`/api/v1/tasks/${id}/messages`, { method: 'POST', json: { message: 'What is in notes.txt?' } });
    expect(follow.status).toBe(201);
    expect(follow.body).toEqual({ success: true, data: { id, messageId: expect.stringMatching(/^msg_/), status: 'running' } });

    const events = await followStream(`${h.url}/api/v1/tasks/${id}/stream`, 'test-key-tenant-a');
    expect(events[0]).toMatchObject({ kind: 'message', payload: { data: { text: 'What is in notes.txt?' } } });
    expect(events.find((e) => e.kind === 'tool_result')?.payload.data.output).toContain('alpha');
    expect(events.at(-1)?.payload.data).toMatchObject({ status: 'completed', turn: 2 });

    const firstCallOfTurn2 = h.model.requests[before];
    const roles = firstCallOfTurn2.messages!.map((m) => m.role);
    expect(roles).toEqual(['system', 'user', 'assistant', 'tool', 'assistant', 'user']);
    expect(firstCallOfTurn2.messages![1].content).toBe('Remember alpha in notes.txt');
    expect(firstCallOfTurn2.messages![4].content).toBe('Saved.');
    expect(firstCallOfTurn2.messages![5].content).toBe('What is in notes.txt?');
    expect((await task(id)).messages.map((m: { text: string }) => m.text)).toEqual([
      'Remember alpha in notes.txt',
      'What is in notes.txt?',
    ]);
  });

  it('queues a follow-up sent while a turn runs and starts it when the turn ends', async () => {
    h.model.script({ text: 'first answer', delayMs: 400 }, { text: 'second answer' });
    const id = await create({ message: 'first' });
    await waitFor(async () => ((await task(id)).status === 'running' ? true : undefined));
    const follow = await h.api(`/api/v1/tasks/${id}/messages`, { method: 'POST', json: { message: 'second' } });
    expect(follow.body.data.status).toBe('running');
    const all = await followStream(`${h.url}/api/v1/tasks/${id}/stream?after=0`, 'test-key-tenant-a', {
      until: (events) => events.filter((e) => e.kind === 'done').length === 2,
    });
    const dones = all.filter((e) => e.kind === 'done').map((e) => e.payload.data.turn);
    expect(dones).toEqual([1, 2]);
    expect(all.filter((e) => e.kind === 'content').map((e) => e.payload.data.text)).toEqual(['first answer', 'second answer']);
  });

  it('fails the turn with a clear error when the model keeps failing, and a follow-up can retry', async () => {
    h.model.script({ status: 500 }, { status: 500 }, { status: 500 });
    const id = await create({ message: 'doomed' });
    const view = await finished(id);
    expect(view.status).toBe('failed');
    expect(view.error).toMatch(/HTTP 500/);
    expect(view.error).toMatch(/3 attempts/);
    h.model.script({ text: 'recovered' });
    await h.api(`/api/v1/tasks/${id}/messages`, { method: 'POST', json: { message: 'try again' } });
    const recovered = await finished(id);
    expect(recovered.status).toBe('completed');
    expect(recovered.error).toBeUndefined();
  });

  it('ends a turn that exceeds the step limit with a clear error', async () => {
    const limited = await startHarness({ MAX_STEPS_PER_TURN: '2' });
    try {
      limited.model.script(
        { toolCalls: [{ name: 'list_files', arguments: {} }] },
        { toolCalls: [{ name: 'list_files', arguments: {} }] },
        { toolCalls: [{ name: 'list_files', arguments: {} }] },
      );
      const res = await limited.api('/api/v1/tasks', { method: 'POST', json: { message: 'loop forever' } });
      const id = res.body.data.id;
      const events = await followStream(`${limited.url}/api/v1/tasks/${id}/stream`, 'test-key-tenant-a');
      expect(events.at(-1)?.payload.data).toMatchObject({ status: 'failed', error: expect.stringContaining('MAX_STEPS_PER_TURN') });
      expect(limited.model.requests).toHaveLength(2);
    } finally {
      await limited.close();
    }
  });

  it('runs several tool calls of one model response in order', async () => {
    h.model.script(
      {
        toolCalls: [
          { name: 'write_file', arguments: { path: 'a.txt', content: 'A' } },
          { name: 'write_file', arguments: { path: 'b.txt', content: 'B' } },
          { name: 'list_files', arguments: {} },
        ],
      },
      { text: 'done' },
    );
    const id = await create({ message: 'three calls' });
    const events = await followStream(`${h.url}/api/v1/tasks/${id}/stream`, 'test-key-tenant-a');
    const calls = events.filter((e) => e.kind === 'tool_call').map((e) => e.payload.data.callId);
    const results = events.filter((e) => e.kind === 'tool_result').map((e) => e.payload.data.callId);
    expect(calls).toHaveLength(3);
    expect(results).toEqual(calls);
    expect(events.filter((e) => e.kind === 'tool_result')[2].payload.data.output).toMatch(/a\.txt[\s\S]*b\.txt/);
  });

  it('refuses a tool path outside the workspace and reports it to the model', async () => {
    h.model.script({ toolCalls: [{ name: 'read_file', arguments: { path: '../../etc/passwd' } }] }, { text: 'could not' });
    const id = await create({ message: 'escape' });
    const events = await followStream(`${h.url}/api/v1/tasks/${id}/stream`, 'test-key-tenant-a');
    const result = events.find((e) => e.kind === 'tool_result')!.payload.data;
    expect(result.status).toBe('error');
    expect(String(result.output)).not.toContain('root:');
  });

  it('rejects artifact paths outside the workspace with 400 and unknown ones with 404', async () => {
    const id = await create({ message: 'anything' });
    await finished(id);
    for (const path of ['../secret', '/etc/passwd', 'downloads/../../x']) {
      const res = await h.api(`/api/v1/tasks/${id}/artifacts/download?path=${encodeURIComponent(path)}`);
      expect({ path, status: res.status, code: res.body.error?.code }).toEqual({ path, status: 400, code: 'VALIDATION_ERROR' });
    }
    const missing = await h.api(`/api/v1/tasks/${id}/artifacts/download?path=downloads/nope.csv`);
    expect(missing.status).toBe(404);
    const noPath = await h.api(`/api/v1/tasks/${id}/artifacts/download`);
    expect(noPath.status).toBe(400);
  });

  it('cancels a running task, and a second cancel changes nothing', async () => {
    h.model.script({ hang: true });
    const id = await create({ message: 'slow' });
    await waitFor(async () => ((await task(id)).status === 'running' ? true : undefined));
    const first = await h.api(`/api/v1/tasks/${id}/cancel`, { method: 'POST' });
    expect(first.body).toEqual({ success: true, data: { id, status: 'cancelled' } });
    const second = await h.api(`/api/v1/tasks/${id}/cancel`, { method: 'POST' });
    expect(second.body).toEqual({ success: true, data: { id, status: 'cancelled' } });
    const events = await followStream(`${h.url}/api/v1/tasks/${id}/stream?after=0`, 'test-key-tenant-a');
    expect(events.filter((e) => e.kind === 'done').map((e) => e.payload.data.status)).toEqual(['cancelled']);
  });

  it('lists tasks newest first with a cursor, hiding showInHistory=false unless asked', async () => {
    const other = await startHarness();
    try {
      const ids: string[] = [];
      for (let i = 0; i < 5; i++)
        ids.push((await other.api('/api/v1/tasks', { method: 'POST', json: { message: `t${i}`, showInHistory: i !== 2 } })).body.data.id);
      const page1 = await other.api('/api/v1/tasks?limit=2');
      expect(page1.body.data.tasks.map((t: { id: string }) => t.id)).toEqual([ids[4], ids[3]]);
      const page2 = await other.api(`/api/v1/tasks?limit=2&cursor=${page1.body.data.nextCursor}`);
      expect(page2.body.data.tasks.map((t: { id: string }) => t.id)).toEqual([ids[1], ids[0]]);
      expect(page2.body.data.nextCursor).toBeNull();
      const all = await other.api('/api/v1/tasks?includeHidden=true&limit=100');
      expect(all.body.data.tasks.map((t: { id: string }) => t.id)).toEqual([...ids].reverse());
    } finally {
      await other.close();
    }
  });
});

describe('A task with no model configured', () => {
  let h: Harness;
  beforeAll(async () => (h = await startHarness({}, false)));
  afterAll(async () => h.close());

  it('still gets an id, then fails with a done event naming the variable to set', async () => {
    const res = await h.api('/api/v1/tasks', { method: 'POST', json: { message: 'hello' } });
    expect(res.body.data.status).toBe('pending');
    const events = await followStream(`${h.url}/api/v1/tasks/${res.body.data.id}/stream`, 'test-key-tenant-a');
    const done = events.at(-1)!;
    expect(done.kind).toBe('done');
    expect(done.payload.data.status).toBe('failed');
    expect(done.payload.data.error).toContain('LLM_MODEL');
    expect(done.payload.data.error).toContain('LLM_BASE_URL');
  });
});
