import type { AtsClient, TaskStreamEvent } from '@agentic-task-service/client';
import type { Harness } from '../../../test/support/service-harness';
import { startHarness } from '../../../test/support/service-harness';
import { parseSseBlocks, readRawStream } from '../../../test/support/sse-client';

// The stream's wire format (framing, Last-Event-ID and ?after= parsing, keep-alive comments, the
// replay→live seam seen byte for byte) is read raw; tasks are created and followed to their end
// with the typed client, and so is what a stream opened on an idle task sends.

const AUTH = { authorization: 'Bearer test-key-tenant-a' };

describe('SSE stream (docs/api.md "Streaming events (SSE)")', () => {
  let h: Harness;
  let ats: AtsClient;
  beforeAll(async () => {
    h = await startHarness();
    ats = h.client();
  });
  afterAll(async () => h.close());

  /**
   * The latest turn's events, as the client follows them to its `done`. No reconnects: one
   * connection the service ended early would otherwise be resumed and go unnoticed.
   */
  const followTurn = async (id: string): Promise<TaskStreamEvent[]> => {
    const events: TaskStreamEvent[] = [];
    for await (const event of ats.tasks.stream(id, { retry: { retries: 0 } })) events.push(event);
    return events;
  };
  const runTask = async (message = 'go') => {
    h.model.script({ toolCalls: [{ name: 'write_file', arguments: { path: 'x.txt', content: 'x' } }] }, { text: 'finished' });
    const { id } = await ats.tasks.create({ message });
    await followTurn(id);
    return id;
  };

  it('frames every event as event, data and id lines, with data {type, data}, and ends after done', async () => {
    const id = await runTask();
    const raw = await readRawStream(`${h.url}/api/v1/tasks/${id}/stream?after=0`, AUTH);
    expect(raw.status).toBe(200);
    expect(raw.contentType).toMatch(/^text\/event-stream/);
    const blocks = parseSseBlocks(raw.text).filter((b) => !('comment' in b));
    for (const block of blocks) {
      expect(Object.keys(block)).toEqual(['event', 'data', 'id']);
      const data = JSON.parse(block.data);
      expect(data.type).toBe(block.event);
      expect(typeof data.data).toBe('object');
    }
    expect(blocks.map((b) => Number(b.id))).toEqual(blocks.map((_, i) => i + 1));
    expect(blocks.at(-1)!.event).toBe('done');
    // Raw block order on the wire: the `event:` line comes first, then `data:`.
    expect(raw.text).toMatch(/(^|\n)event: message\ndata: \{"type":"message"/);
  });

  it('resumes right after Last-Event-ID and after ?after=', async () => {
    const id = await runTask();
    const all = parseSseBlocks((await readRawStream(`${h.url}/api/v1/tasks/${id}/stream?after=0`, AUTH)).text).filter((b) => b.id);
    const fromHeader = parseSseBlocks(
      (await readRawStream(`${h.url}/api/v1/tasks/${id}/stream`, { ...AUTH, 'last-event-id': '3' })).text,
    ).filter((b) => b.id);
    expect(fromHeader.map((b) => b.id)).toEqual(all.slice(3).map((b) => b.id));
    const fromQuery = parseSseBlocks((await readRawStream(`${h.url}/api/v1/tasks/${id}/stream?after=5`, AUTH)).text).filter((b) => b.id);
    expect(fromQuery.map((b) => b.id)).toEqual(all.slice(5).map((b) => b.id));
    const pastEnd = parseSseBlocks((await readRawStream(`${h.url}/api/v1/tasks/${id}/stream?after=999`, AUTH)).text).filter((b) => b.id);
    expect(pastEnd).toEqual([]);
  });

  it('rejects a malformed resume position with VALIDATION_ERROR', async () => {
    const id = await runTask();
    for (const q of ['after=-1', 'after=abc', 'after=1.5']) {
      const res = await h.api(`/api/v1/tasks/${id}/stream?${q}`);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('VALIDATION_ERROR');
    }
  });

  it('sends keep-alive comments while a turn waits', async () => {
    h.model.script({ text: 'slow', delayMs: 700 });
    const { id } = await ats.tasks.create({ message: 'slow' });
    const raw = await readRawStream(`${h.url}/api/v1/tasks/${id}/stream`, AUTH);
    expect(parseSseBlocks(raw.text).filter((b) => b.comment === 'keep-alive').length).toBeGreaterThanOrEqual(2);
    expect(
      parseSseBlocks(raw.text)
        .filter((b) => b.id)
        .at(-1)?.event,
    ).toBe('done');
  });

  it('never misses or duplicates an event at the replay→live seam', async () => {
    // Many quick tool calls produce a burst of appends while clients connect at random moments.
    // Read raw: the typed client skips an id it already yielded, which would hide a duplicate.
    const calls = Array.from({ length: 30 }, (_, i) => ({ name: 'write_file', arguments: { path: `f${i}.txt`, content: String(i) } }));
    h.model.script({ toolCalls: calls }, { text: 'all written' });
    const { id } = await ats.tasks.create({ message: 'burst' });
    const streams = await Promise.all(
      Array.from({ length: 12 }, async (_, i) => {
        await new Promise((r) => setTimeout(r, i * 7));
        return readRawStream(`${h.url}/api/v1/tasks/${id}/stream?after=0`, AUTH);
      }),
    );
    for (const raw of streams) {
      const ids = parseSseBlocks(raw.text)
        .filter((b) => b.id)
        .map((b) => Number(b.id));
      expect(ids).toEqual(ids.map((_, i) => i + 1));
      expect(ids.length).toBeGreaterThan(60);
    }
  });

  it('sends what follows and ends when opened on a task with no running turn', async () => {
    const id = await runTask();
    const started = Date.now();
    const kinds = (await followTurn(id)).map((e) => e.type);
    expect(Date.now() - started).toBeLessThan(2000);
    expect(kinds[0]).toBe('message');
    expect(kinds.at(-1)).toBe('done');
  });
});
