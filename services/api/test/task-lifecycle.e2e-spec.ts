import type { AtsClient, TaskStreamEvent } from '@agentic-task-service/client';
import type { Harness } from '../../../test/support/service-harness';
import { startHarness, waitFor } from '../../../test/support/service-harness';
import { parseSseBlocks, readRawStream } from '../../../test/support/sse-client';

// The public API through the typed client (libs/client). Raw HTTP stays only where the check is
// about the HTTP layer: the SSE frames' `event:` names, Content-Disposition, a download without
// its `path` query (which the client cannot send).

type EventOf<T extends TaskStreamEvent['type']> = Extract<TaskStreamEvent, { type: T }>;

/** The data of an event that must be of `type` (asserted), typed as that event's data. */
function dataOf<T extends TaskStreamEvent['type']>(event: TaskStreamEvent | undefined, type: T): EventOf<T>['data'] {
  expect(event?.type).toBe(type);
  return (event as EventOf<T>).data as EventOf<T>['data'];
}

/** The events of a task's stream (the latest turn, or after `after`) to the end of the turn it follows. */
async function turnEvents(client: AtsClient, id: string, after?: number): Promise<TaskStreamEvent[]> {
  const events: TaskStreamEvent[] = [];
  for await (const event of client.tasks.stream(id, { after })) events.push(event);
  return events;
}

/**
 * The task's whole history until `enough` says so. The service ends a stream after the turn it
 * follows; like an EventSource, this reopens it after the last event while more is expected.
 */
async function historyUntil(client: AtsClient, id: string, enough: (events: TaskStreamEvent[]) => boolean, timeoutMs = 15_000) {
  const events: TaskStreamEvent[] = [];
  const until = Date.now() + timeoutMs;
  while (!enough(events)) {
    if (Date.now() > until) throw new Error(`the stream did not deliver in time; got ${events.map((e) => `${e.id}:${e.type}`).join(', ')}`);
    for await (const event of client.tasks.stream(id, { after: events.at(-1)?.id ?? 0 })) {
      events.push(event);
      if (enough(events)) break;
    }
    if (!enough(events)) await new Promise((r) => setTimeout(r, 50));
  }
  return events;
}

describe('A task from creation to artifacts and follow-ups', () => {
  let h: Harness;
  let ats: AtsClient;
  beforeAll(async () => {
    h = await startHarness();
    ats = h.client();
  });
  afterAll(async () => h.close());

  const create = async (body: Parameters<AtsClient['tasks']['create']>[0]) => (await ats.tasks.create(body)).id;
  // One read per probe: reading twice could see pending, then running, and return a running task.
  const finished = (id: string) =>
    waitFor(async () => {
      const view = await ats.tasks.get(id);
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
    const created = await ats.tasks.create({ message: 'Write a report', env: { REGION: 'eu' } });
    expect(created).toEqual({ id: expect.stringMatching(/^task_/), status: 'pending' });
    const id = created.id;

    const kinds: string[] = ['message', 'status', 'usage', 'tool_call', 'tool_started', 'tool_result', 'artifact', 'content', 'done'];
    const events = (await turnEvents(ats, id)).filter((e) => kinds.includes(e.type));
    expect(events.map((e) => e.type)).toEqual([
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
    const call = dataOf(events[3], 'tool_call');
    expect(call).toEqual({
      callId: expect.stringMatching(/^call_/),
      toolName: 'write_file',
      status: 'approved',
      args: { path: 'downloads/report.md', content: '# Report\n\ntotal: 42\n' },
    });
    expect(events[5].data).toMatchObject({
      callId: call.callId,
      toolName: 'write_file',
      status: 'success',
      output: expect.any(String),
      durationMs: expect.any(Number),
    });
    expect(events[6].data).toMatchObject({ path: 'downloads/report.md', size: 20, status: 'recorded', callId: call.callId });
    expect(events[8].data).toEqual({ text: 'I wrote downloads/report.md.' });
    expect(events[9].data).toMatchObject({ status: 'completed' });
    // On the wire, each frame's `event:` name is the type its data carries.
    const frames = parseSseBlocks(
      (await readRawStream(`${h.url}/api/v1/tasks/${id}/stream?after=0`, { authorization: 'Bearer test-key-tenant-a' })).text,
    ).filter((block) => block.data !== undefined);
    expect(frames.length).toBeGreaterThanOrEqual(10);
    for (const frame of frames) expect(JSON.parse(frame.data).type).toBe(frame.event);

    const view = await ats.tasks.get(id);
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

    expect(await ats.artifacts.list(id)).toEqual([
      {
        name: 'report.md',
        path: 'downloads/report.md',
        size: 20,
        category: 'markdown',
        mimeType: 'text/markdown',
        modifiedAt: expect.any(String),
      },
    ]);
    const download = await ats.artifacts.download(id, 'downloads/report.md');
    expect(download.contentType).toBe('text/markdown');
    expect(download.fileName).toBe('report.md');
    expect(new TextDecoder().decode(download.body)).toBe('# Report\n\ntotal: 42\n');
    // The disposition type (a download, not inline) is a header the client does not surface.
    const raw = await fetch(`${h.url}/api/v1/tasks/${id}/artifacts/download?path=downloads/report.md`, {
      headers: { authorization: 'Bearer test-key-tenant-a' },
    });
    expect(raw.status).toBe(200);
    expect(raw.headers.get('content-disposition')).toContain('attachment; filename="report.md"');
    expect(raw.headers.get('x-content-type-options')).toBe('nosniff');
    await raw.body?.cancel();
  });

  it('keeps the context for a follow-up and replays only the latest turn by default', async () => {
    h.model.script({ toolCalls: [{ name: 'write_file', arguments: { path: 'notes.txt', content: 'alpha' } }] }, { text: 'Saved.' });
    const id = await create({ message: 'Remember alpha in notes.txt' });
    await turnEvents(ats, id);

    h.model.script({ toolCalls: [{ name: 'read_file', arguments: { path: 'notes.txt' } }] }, { text: 'It says alpha.' });
    const before = h.model.requests.length;
    const follow = await ats.tasks.sendMessage(id, { message: 'What is in notes.txt?' });
    expect(follow).toEqual({ id, messageId: expect.stringMatching(/^msg_/), status: 'running' });

    const events = await turnEvents(ats, id);
    expect(events[0]).toMatchObject({ type: 'message', data: { text: 'What is in notes.txt?' } });
    expect(
      dataOf(
        events.find((e) => e.type === 'tool_result'),
        'tool_result',
      ).output,
    ).toContain('alpha');
    expect(dataOf(events.at(-1), 'done')).toMatchObject({ status: 'completed', turn: 2 });

    const firstCallOfTurn2 = h.model.requests[before];
    const roles = firstCallOfTurn2.messages!.map((m) => m.role);
    expect(roles).toEqual(['system', 'user', 'assistant', 'tool', 'assistant', 'user']);
    expect(firstCallOfTurn2.messages![1].content).toBe('Remember alpha in notes.txt');
    expect(firstCallOfTurn2.messages![4].content).toBe('Saved.');
    expect(firstCallOfTurn2.messages![5].content).toBe('What is in notes.txt?');
    expect((await ats.tasks.get(id)).messages.map((m) => m.text)).toEqual(['Remember alpha in notes.txt', 'What is in notes.txt?']);
  });

  it('queues a follow-up sent while a turn runs and starts it when the turn ends', async () => {
    h.model.script({ text: 'first answer', delayMs: 400 }, { text: 'second answer' });
    const id = await create({ message: 'first' });
    await waitFor(async () => ((await ats.tasks.get(id)).status === 'running' ? true : undefined));
    const follow = await ats.tasks.sendMessage(id, { message: 'second' });
    expect(follow.status).toBe('running');
    const all = await historyUntil(ats, id, (events) => events.filter((e) => e.type === 'done').length === 2);
    const dones = all.filter((e) => e.type === 'done').map((e) => dataOf(e, 'done').turn);
    expect(dones).toEqual([1, 2]);
    expect(all.filter((e) => e.type === 'content').map((e) => dataOf(e, 'content').text)).toEqual(['first answer', 'second answer']);
  });

  it('fails the turn with a clear error when the model keeps failing, and a follow-up can retry', async () => {
    h.model.script({ status: 500 }, { status: 500 }, { status: 500 });
    const id = await create({ message: 'doomed' });
    const view = await finished(id);
    expect(view.status).toBe('failed');
    expect(view.error).toMatch(/HTTP 500/);
    expect(view.error).toMatch(/3 attempts/);
    h.model.script({ text: 'recovered' });
    await ats.tasks.sendMessage(id, { message: 'try again' });
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
      const client = limited.client();
      const { id } = await client.tasks.create({ message: 'loop forever' });
      const events = await turnEvents(client, id);
      expect(dataOf(events.at(-1), 'done')).toMatchObject({ status: 'failed', error: expect.stringContaining('MAX_STEPS_PER_TURN') });
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
    const events = await turnEvents(ats, id);
    const calls = events.filter((e) => e.type === 'tool_call').map((e) => dataOf(e, 'tool_call').callId);
    const results = events.filter((e) => e.type === 'tool_result').map((e) => dataOf(e, 'tool_result'));
    expect(calls).toHaveLength(3);
    expect(results.map((r) => r.callId)).toEqual(calls);
    expect(results[2].output).toMatch(/a\.txt[\s\S]*b\.txt/);
  });

  it('refuses a tool path outside the workspace and reports it to the model', async () => {
    h.model.script({ toolCalls: [{ name: 'read_file', arguments: { path: '../../etc/passwd' } }] }, { text: 'could not' });
    const id = await create({ message: 'escape' });
    const events = await turnEvents(ats, id);
    const result = dataOf(
      events.find((e) => e.type === 'tool_result'),
      'tool_result',
    );
    expect(result.status).toBe('error');
    expect(String(result.output)).not.toContain('root:');
  });

  it('rejects artifact paths outside the workspace with 400 and unknown ones with 404', async () => {
    const id = await create({ message: 'anything' });
    await finished(id);
    for (const path of ['../secret', '/etc/passwd', 'downloads/../../x']) {
      const error = await ats.artifacts.download(id, path).catch((e: unknown) => e);
      expect({ path, error }).toMatchObject({ path, error: { status: 400, code: 'VALIDATION_ERROR' } });
    }
    await expect(ats.artifacts.download(id, 'downloads/nope.csv')).rejects.toMatchObject({ status: 404 });
    // Without the `path` query at all: a request the client cannot make.
    const noPath = await h.api(`/api/v1/tasks/${id}/artifacts/download`);
    expect(noPath.status).toBe(400);
  });

  it('cancels a running task, and a second cancel changes nothing', async () => {
    h.model.script({ hang: true });
    const id = await create({ message: 'slow' });
    await waitFor(async () => ((await ats.tasks.get(id)).status === 'running' ? true : undefined));
    expect(await ats.tasks.cancel(id)).toEqual({ id, status: 'cancelled' });
    expect(await ats.tasks.cancel(id)).toEqual({ id, status: 'cancelled' });
    const events = await turnEvents(ats, id, 0);
    expect(events.filter((e) => e.type === 'done').map((e) => dataOf(e, 'done').status)).toEqual(['cancelled']);
  });

  it('lists tasks newest first with a cursor, hiding showInHistory=false unless asked', async () => {
    const other = await startHarness();
    try {
      const client = other.client();
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) ids.push((await client.tasks.create({ message: `t${i}`, showInHistory: i !== 2 })).id);
      const page1 = await client.tasks.listPage({ limit: 2 });
      expect(page1.tasks.map((t) => t.id)).toEqual([ids[4], ids[3]]);
      const page2 = await client.tasks.listPage({ limit: 2, cursor: page1.nextCursor ?? undefined });
      expect(page2.tasks.map((t) => t.id)).toEqual([ids[1], ids[0]]);
      expect(page2.nextCursor).toBeNull();
      const all = await client.tasks.listPage({ includeHidden: true, limit: 100 });
      expect(all.tasks.map((t) => t.id)).toEqual([...ids].reverse());
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
    const ats = h.client();
    const created = await ats.tasks.create({ message: 'hello' });
    expect(created.status).toBe('pending');
    const events = await turnEvents(ats, created.id);
    const done = dataOf(events.at(-1), 'done');
    expect(done.status).toBe('failed');
    expect(done.error).toContain('LLM_MODEL');
    expect(done.error).toContain('LLM_BASE_URL');
  });
});
