import type { AtsClient, TaskStreamEvent } from '@agentic-task-service/client';
import type { Harness } from '../../../test/support/service-harness';
import { API_KEY, OTHER_API_KEY, startHarness } from '../../../test/support/service-harness';
import { readRawStream } from '../../../test/support/sse-client';

// GET /api/v1/tasks/{id}/events, the audit trail: the stream's replay from event 1, each event
// with the time the store recorded it, in bounded pages. Read raw over HTTP (the client's
// history iterator is tested in test/client).

const CANARY = 'canary-41d0b7e2-history';

describe('Task events (the audit trail)', () => {
  let h: Harness;
  let ats: AtsClient;
  let id: string;
  /** The stream's replay of the whole history: what the endpoint must list. */
  let replay: TaskStreamEvent[];
  beforeAll(async () => {
    h = await startHarness();
    ats = h.client();
    h.model.script(
      { text: `I see ${CANARY}`, toolCalls: [{ name: 'shell', arguments: { command: 'echo "token $API_TOKEN"' } }] },
      { text: 'Echoed it.' },
    );
    ({ id } = await ats.tasks.create({ message: 'echo the token', secrets: { API_TOKEN: CANARY } }));
    for await (const event of ats.tasks.stream(id)) void event;
    h.model.script({ text: 'Second turn.' });
    await ats.tasks.sendMessage(id, 'again');
    for await (const event of ats.tasks.stream(id)) void event;
    replay = [];
    for await (const event of ats.tasks.stream(id, { after: 0 })) replay.push(event);
  });
  afterAll(async () => h.close());

  const events = (query = '', key: string | null = API_KEY) => h.api(`/api/v1/tasks/${id}/events${query}`, { key });

  it('lists the events of the stream replay with after=0, ids 1..n, each with its recorded time, oldest first', async () => {
    const { status, body } = await events('?limit=1000');
    expect(status).toBe(200);
    expect(body.success).toBe(true);
    expect(body.data.nextAfter).toBeUndefined();
    const listed: { id: number; type: string; data: unknown; at: string }[] = body.data.events;
    expect(listed.map(({ at: _at, ...event }) => event)).toEqual(replay);
    expect(listed.map((e) => e.id)).toEqual(replay.map((_, i) => i + 1));
    expect(listed.map((e) => e.type)).toEqual(expect.arrayContaining(['message', 'tool_call', 'tool_result', 'content', 'done']));
    for (const event of listed) expect(new Date(event.at).toISOString()).toBe(event.at);
    const times = listed.map((e) => Date.parse(e.at));
    expect(times).toEqual([...times].sort((a, b) => a - b));
    // Recorded as they happened, not when this request read them.
    expect(times.at(-1)!).toBeLessThanOrEqual(Date.now());
    const { body: task } = await h.api(`/api/v1/tasks/${id}`);
    const firstMessage = task.data.messages[0];
    expect(listed[firstMessage.eventId - 1].at).toBe(firstMessage.createdAt);
  });

  it('pages with nextAfter, which is absent on the last page', async () => {
    const paged: unknown[] = [];
    let after: number | undefined = 0;
    let pages = 0;
    while (after !== undefined) {
      const { status, body } = await events(`?after=${after}&limit=4`);
      expect(status).toBe(200);
      expect(body.data.events.length).toBeLessThanOrEqual(4);
      paged.push(...body.data.events);
      after = body.data.nextAfter;
      if (after !== undefined) expect(after).toBe(body.data.events.at(-1).id);
      pages += 1;
    }
    expect(pages).toBe(Math.ceil(replay.length / 4) + (replay.length % 4 === 0 ? 1 : 0));
    expect(paged).toEqual((await events()).body.data.events);
    expect((await events()).body.data.events).toHaveLength(replay.length);
    // A page that ends exactly at the latest event says so only by the next (empty) page.
    expect((await events(`?after=${replay.length}`)).body).toEqual({ success: true, data: { events: [] } });
    expect((await events(`?after=${replay.length - 2}&limit=1`)).body.data.nextAfter).toBe(replay.length - 1);
  });

  it('never shows a secret: the same redacted text as the stream', async () => {
    const { body } = await events();
    const text = JSON.stringify(body);
    expect(text).not.toContain(CANARY);
    expect(text).toContain('[REDACTED:API_TOKEN]');
    const result = body.data.events.find((e: { type: string }) => e.type === 'tool_result');
    expect(result.data.output).toContain('token [REDACTED:API_TOKEN]');
    const raw = await readRawStream(`${h.url}/api/v1/tasks/${id}/stream?after=0`, { authorization: `Bearer ${API_KEY}` });
    expect(raw.text).not.toContain(CANARY);
  });

  it("answers 404 NOT_FOUND for another tenant's task and an unknown one, 401 without a key", async () => {
    const theirs = await events('', OTHER_API_KEY);
    const unknown = await h.api('/api/v1/tasks/task_00000000000000000000000000000000/events');
    for (const answer of [theirs, unknown]) {
      expect(answer.status).toBe(404);
      expect(answer.body.error.code).toBe('NOT_FOUND');
    }
    expect(JSON.stringify(theirs.body)).not.toContain(CANARY);
    expect((await events('', null)).status).toBe(401);
  });

  it.each([
    ['?after=-1', 'after'],
    ['?after=abc', 'after'],
    ['?after=01', 'after'],
    ['?after=1.5', 'after'],
    ['?limit=0', 'limit'],
    ['?limit=1001', 'limit'],
    ['?limit=ten', 'limit'],
    ['?limit=2.5', 'limit'],
  ])('answers 400 VALIDATION_ERROR naming the field for %s', async (query, field) => {
    const { status, body } = await events(query);
    expect(status).toBe(400);
    expect(body.error.code).toBe('VALIDATION_ERROR');
    expect(body.error.message).toContain(field);
  });
});
