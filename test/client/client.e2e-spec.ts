import type { TaskEventRecord, TaskStreamEvent } from '@agentic-task-service/client';
import { AtsClient, AtsError } from '@agentic-task-service/client';
import type { Harness } from '../support/service-harness';
import { API_KEY, OTHER_API_KEY, startHarness } from '../support/service-harness';
import { ALL_EVENT_KINDS, followStream } from '../support/sse-client';

// The typed client (libs/client) against the running service: every method, its typed errors,
// and paging. The stream's resumption is tested in stream-resume.e2e-spec.ts.

describe('The TypeScript client', () => {
  let h: Harness;
  let ats: AtsClient;
  beforeAll(async () => {
    h = await startHarness();
    ats = h.client();
  });
  afterAll(async () => h.close());

  /** Follows a task to the end of its turn and returns the events. */
  const settle = async (id: string): Promise<TaskStreamEvent[]> => {
    const events: TaskStreamEvent[] = [];
    for await (const event of ats.tasks.stream(id)) events.push(event);
    return events;
  };

  it('creates a task, streams it to done, reads it and downloads the artifact with its exact name', async () => {
    h.model.script(
      { toolCalls: [{ name: 'write_file', arguments: { path: 'downloads/résumé 1.md', content: '# Hi\n' } }] },
      { text: 'Wrote it.' },
    );
    expect(await ats.health()).toEqual({ status: 'ok' });
    const created = await ats.tasks.create({ message: 'write a file', env: { REGION: 'eu' } });
    expect(created).toEqual({ id: expect.stringMatching(/^task_/), status: 'pending' });
    const events = await settle(created.id);
    const types = ['message', 'status', 'usage', 'tool_call', 'tool_started', 'tool_result', 'artifact', 'usage', 'content', 'done'];
    expect(events.map((e) => e.type)).toEqual(types);
    expect(events.map((e) => e.id)).toEqual(types.map((_, i) => i + 1));
    const done = events.at(-1)!;
    expect(done.type === 'done' && done.data.status).toBe('completed');

    const task = await ats.tasks.get(created.id);
    expect(task).toMatchObject({ id: created.id, status: 'completed', envKeys: ['REGION'], lastEventId: 10 });
    const [file] = await ats.artifacts.list(created.id);
    expect(file).toMatchObject({ name: 'résumé 1.md', path: 'downloads/résumé 1.md', size: 5, category: 'markdown' });
    const download = await ats.artifacts.download(created.id, file.path);
    expect(download.fileName).toBe('résumé 1.md');
    expect(download.contentType).toMatch(/^text\/markdown/);
    expect(download.size).toBe(5);
    expect(new TextDecoder().decode(download.body)).toBe('# Hi\n');

    // Time travel: the step's changes, and the workspace as of the tool_result and before it.
    const result = events.find((e) => e.type === 'tool_result')!;
    expect(result.type === 'tool_result' && result.data.changes).toEqual([{ path: 'downloads/résumé 1.md', change: 'created', size: 5 }]);
    expect(await ats.files.list(created.id, { at: result.id - 1 })).toEqual({ at: result.id - 1, files: [], nextCursor: null });
    const all = [];
    for await (const f of ats.files.listAll(created.id, { at: result.id, limit: 1 })) all.push(f);
    expect(all).toEqual([{ path: 'downloads/résumé 1.md', size: 5, sha256: expect.stringMatching(/^[0-9a-f]{64}$/) }]);
    const asThen = await ats.files.download(created.id, 'downloads/résumé 1.md', { at: result.id });
    expect(asThen.fileName).toBe('résumé 1.md');
    expect(new TextDecoder().decode(asThen.body)).toBe('# Hi\n');
    await expect(ats.files.list(created.id, { at: 10_000 })).rejects.toMatchObject({ code: 'NOT_FOUND', status: 404 });
  });

  it('uploads files with a create (multipart), text fields typed as in JSON', async () => {
    h.model.script({ text: 'Read them.' });
    const created = await ats.tasks.create({
      message: 'read the files',
      autoExecute: false,
      maxTokens: 5000,
      maxCostUsd: 2.5,
      secrets: { TOKEN: 'secret-value-1' },
      files: [
        { name: 'data.csv', content: 'a,b\n1,2\n' },
        { name: 'blob.bin', content: new Uint8Array([0, 1, 2, 255]) },
      ],
    });
    await settle(created.id);
    const task = await ats.tasks.get(created.id);
    expect(task.files).toEqual([
      { name: 'data.csv', size: 8 },
      { name: 'blob.bin', size: 4 },
    ]);
    expect(task).toMatchObject({ autoExecute: false, maxTokens: 5000, maxCostUsd: 2.5, secretNames: ['TOKEN'] });
  });

  it('approves and declines tool calls; a second decision is a typed CONFLICT', async () => {
    h.model.script({ toolCalls: [{ name: 'list_files', arguments: {} }] }, { text: 'listed' });
    const { id } = await ats.tasks.create({ message: 'list', autoExecute: false });
    const events: TaskStreamEvent[] = [];
    for await (const event of ats.tasks.stream(id)) {
      events.push(event);
      if (event.type === 'tool_call' && event.data.status === 'awaiting_approval') {
        expect(await ats.tasks.approve(id, event.data.callId, 'proceed_once')).toEqual({
          callId: event.data.callId,
          outcome: 'proceed_once',
          approved: true,
        });
        const again = await ats.tasks.approve(id, event.data.callId, 'cancel').catch((error: unknown) => error);
        expect(again).toBeInstanceOf(AtsError);
        expect(again).toMatchObject({ code: 'CONFLICT', status: 409, message: expect.stringContaining(event.data.callId) });
      }
    }
    expect(events.map((e) => e.type)).toEqual(
      expect.arrayContaining(['tool_call', 'tool_decision', 'tool_started', 'tool_result', 'content', 'done']),
    );
  });

  it('sends a follow-up into the same task and streams the new turn only', async () => {
    h.model.script({ text: 'first' });
    const { id } = await ats.tasks.create({ message: 'one' });
    await settle(id);
    h.model.script({ text: 'second' });
    const accepted = await ats.tasks.sendMessage(id, { message: 'two', maxTokens: 9000, maxCostUsd: 4 });
    expect(accepted).toEqual({ id, messageId: expect.stringMatching(/^msg_/), status: expect.stringMatching(/^(pending|running)$/) });
    const turn = await settle(id);
    expect(turn[0]).toMatchObject({ type: 'message', data: { text: 'two', maxTokens: 9000, maxCostUsd: 4 } });
    expect(turn.filter((e) => e.type === 'done')).toHaveLength(1);
    expect((await ats.tasks.get(id)).messages.map((m) => m.text)).toEqual(['one', 'two']);
    // `after: 0` replays both turns: the first `done` does not end it, the last one does.
    const all: TaskStreamEvent[] = [];
    for await (const event of ats.tasks.stream(id, { after: 0 })) all.push(event);
    expect(all.filter((e) => e.type === 'done')).toHaveLength(2);
    expect(all.map((e) => e.id)).toEqual(all.map((_, i) => i + 1));
  });

  it('lists the audit trail across pages: the events of the stream with their recorded times', async () => {
    h.model.script({ toolCalls: [{ name: 'list_files', arguments: { path: '.' } }] }, { text: 'listed' });
    const { id } = await ats.tasks.create({ message: 'audit me' });
    await settle(id);
    const replay: TaskStreamEvent[] = [];
    for await (const event of ats.tasks.stream(id, { after: 0 })) replay.push(event);

    const history: TaskEventRecord[] = [];
    for await (const event of ats.tasks.history(id, { limit: 3 })) history.push(event);
    expect(history.map(({ id: eventId, type, data }) => ({ id: eventId, type, data }))).toEqual(replay);
    expect(history.every((e) => new Date(e.at).toISOString() === e.at)).toBe(true);

    const first = await ats.tasks.eventsPage(id, { limit: 3 });
    expect(first.events.map((e) => e.id)).toEqual([1, 2, 3]);
    expect(first.nextAfter).toBe(3);
    const last = await ats.tasks.eventsPage(id, { after: replay.length - 1 });
    expect(last).toEqual({ events: [history.at(-1)] });
    await expect(ats.tasks.eventsPage(id, { limit: 1001 })).rejects.toMatchObject({ code: 'VALIDATION_ERROR', status: 400 });
    await expect(h.client(OTHER_API_KEY).tasks.history(id).next()).rejects.toMatchObject({ code: 'NOT_FOUND', status: 404 });
  });

  it('cancels a task waiting for approval', async () => {
    h.model.script({ toolCalls: [{ name: 'list_files', arguments: {} }] });
    const { id } = await ats.tasks.create({ message: 'wait', autoExecute: false });
    for await (const event of ats.tasks.stream(id)) if (event.type === 'tool_call') break;
    expect(await ats.tasks.cancel(id)).toEqual({ id, status: 'cancelled' });
    expect((await ats.tasks.get(id)).status).toBe('cancelled');
  });

  it('forks a task after its done: a new task with forkedFrom, at rest; a tool_call is a CONFLICT', async () => {
    h.model.script({ toolCalls: [{ name: 'list_files', arguments: {} }] }, { text: 'Listed.' });
    const { id } = await ats.tasks.create({ message: 'list' });
    for await (const event of ats.tasks.stream(id)) if (event.type === 'done') break;
    const events: TaskEventRecord[] = [];
    for await (const event of ats.tasks.history(id)) events.push(event);
    const done = events.find((e) => e.type === 'done')!.id;
    const fork = await ats.tasks.fork(id, { afterEventId: done });
    expect(fork).toEqual({ id: expect.stringMatching(/^task_/), status: 'completed', forkedFrom: { taskId: id, eventId: done } });
    expect((await ats.tasks.get(fork.id)).forkedFrom).toEqual({ taskId: id, eventId: done });
    const call = events.find((e) => e.type === 'tool_call')!.id;
    await expect(ats.tasks.fork(id, { afterEventId: call })).rejects.toMatchObject({ code: 'CONFLICT', status: 409 });
  });

  it("lists every task across pages, newest first, and only the caller's", async () => {
    const other = h.client(OTHER_API_KEY);
    const mine: string[] = [];
    for (const n of [1, 2, 3]) {
      h.model.script({ text: `listed ${n}` });
      const { id } = await other.tasks.create({ message: `task ${n}` });
      for await (const event of other.tasks.stream(id)) void event;
      mine.unshift(id);
    }
    const listed: string[] = [];
    for await (const task of other.tasks.list({ limit: 2 })) listed.push(task.id);
    expect(listed).toEqual(mine);
    const firstPage = await other.tasks.listPage({ limit: 2 });
    expect(firstPage.tasks).toHaveLength(2);
    expect(firstPage.nextCursor).toEqual(expect.any(String));
  });

  it('turns every error answer into an AtsError with the code, status and message of the envelope', async () => {
    const missing = await ats.tasks.get('task_0123456789abcdef0123456789abcdef').catch((error: unknown) => error);
    expect(missing).toMatchObject({ name: 'AtsError', code: 'NOT_FOUND', status: 404, message: expect.stringContaining('not found') });
    const badKey = new AtsClient({ baseUrl: h.url, apiKey: 'not-a-key' });
    await expect(badKey.tasks.listPage()).rejects.toMatchObject({ code: 'INVALID_API_KEY', status: 401 });
    await expect(ats.tasks.create({ message: '' })).rejects.toMatchObject({ code: 'VALIDATION_ERROR', status: 400 });
    await expect(ats.tasks.listPage({ limit: 1000 })).rejects.toMatchObject({ code: 'VALIDATION_ERROR', status: 400 });
    await expect(ats.tasks.stream('task_0123456789abcdef0123456789abcdef').next()).rejects.toMatchObject({
      code: 'NOT_FOUND',
      status: 404,
    });
    // The other tenant's task does not exist for this key.
    const other = h.client(OTHER_API_KEY);
    const [theirs] = await other.tasks.listPage().then((page) => page.tasks);
    await expect(ats.artifacts.list(theirs.id)).rejects.toMatchObject({ code: 'NOT_FOUND', status: 404 });
  });

  it('says NETWORK_ERROR, status 0, when nothing answers, after its bounded retries of a read', async () => {
    const nowhere = new AtsClient({ baseUrl: 'http://127.0.0.1:9', apiKey: API_KEY, retry: { retries: 2, baseDelayMs: 10 } });
    const started = Date.now();
    await expect(nowhere.tasks.listPage()).rejects.toMatchObject({ code: 'NETWORK_ERROR', status: 0 });
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('streams what the browser EventSource client sees, in the same order', async () => {
    h.model.script({ toolCalls: [{ name: 'list_files', arguments: {} }] }, { text: 'ok' });
    const { id } = await ats.tasks.create({ message: 'compare' });
    const typed = await settle(id);
    const reference = await followStream(`${h.url}/api/v1/tasks/${id}/stream?after=0`, API_KEY, { kinds: ALL_EVENT_KINDS });
    expect(typed.map(({ id, type, data }) => ({ id, payload: { type, data } }))).toEqual(
      reference.map(({ id, payload }) => ({ id, payload })),
    );
  });
});
