import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TaskStreamEvent } from '@agentic-task-service/client';
import { AtsClient } from '@agentic-task-service/client';
import type { DroppingProxy } from '../support/dropping-proxy';
import { startDroppingProxy } from '../support/dropping-proxy';
import type { Harness } from '../support/service-harness';
import { API_KEY, startHarness } from '../support/service-harness';
import { ALL_EVENT_KINDS, followStream } from '../support/sse-client';

// The client's stream survives connections that break mid-turn: a proxy between it and the
// service cuts every stream connection after a few events, halfway through the next event's block.

describe("The client's stream across dropped connections", () => {
  let h: Harness;
  let proxy: DroppingProxy;
  beforeAll(async () => {
    h = await startHarness();
    proxy = await startDroppingProxy(h.url, 2);
  });
  afterAll(async () => {
    await proxy.close();
    await h.close();
  });

  const collect = async (stream: AsyncIterable<TaskStreamEvent>) => {
    const events: TaskStreamEvent[] = [];
    for await (const event of stream) events.push(event);
    return events;
  };

  it('yields every event of a live turn exactly once, in order, and ends after done', async () => {
    // Slow replies keep the turn running while the stream is cut and resumed.
    h.model.script(
      { toolCalls: [{ name: 'write_file', arguments: { path: 'downloads/a.md', content: 'a' } }], delayMs: 150 },
      { toolCalls: [{ name: 'list_files', arguments: {} }], delayMs: 150 },
      { toolCalls: [{ name: 'read_file', arguments: { path: 'downloads/a.md' } }], delayMs: 150 },
      { text: 'all done', delayMs: 150 },
    );
    const direct = new AtsClient({ baseUrl: h.url, apiKey: API_KEY });
    const viaProxy = new AtsClient({ baseUrl: proxy.url, apiKey: API_KEY });
    const { id } = await direct.tasks.create({ message: 'three tools' });
    const dropsBefore = proxy.drops;
    const events = await collect(viaProxy.tasks.stream(id, { retry: { baseDelayMs: 20, maxDelayMs: 100 } }));

    const reference = await followStream(`${h.url}/api/v1/tasks/${id}/stream?after=0`, API_KEY, { kinds: ALL_EVENT_KINDS });
    expect(reference.length).toBeGreaterThan(15);
    expect(proxy.drops - dropsBefore).toBeGreaterThanOrEqual(Math.floor(reference.length / 3));
    expect(events.map(({ id, type, data }) => ({ id, payload: { type, data } }))).toEqual(
      reference.map(({ id, payload }) => ({ id, payload })),
    );
    expect(events.at(-1)).toMatchObject({ type: 'done', data: { status: 'completed' } });
  });

  it('resumes after a given event id across drops', async () => {
    h.model.script({ toolCalls: [{ name: 'list_files', arguments: {} }], delayMs: 100 }, { text: 'listed', delayMs: 100 });
    const viaProxy = new AtsClient({ baseUrl: proxy.url, apiKey: API_KEY });
    const { id } = await viaProxy.tasks.create({ message: 'list' });
    const all = await collect(viaProxy.tasks.stream(id, { retry: { baseDelayMs: 20 } }));
    const rest = await collect(viaProxy.tasks.stream(id, { after: 3, retry: { baseDelayMs: 20 } }));
    expect(rest.map((e) => e.id)).toEqual(all.filter((e) => e.id > 3).map((e) => e.id));
  });

  it('ends at once on a finished task it has seen everything of', async () => {
    h.model.script({ text: 'quick' });
    const direct = new AtsClient({ baseUrl: h.url, apiKey: API_KEY });
    const { id } = await direct.tasks.create({ message: 'quick' });
    const events = await collect(direct.tasks.stream(id));
    const again = await collect(direct.tasks.stream(id, { after: events.at(-1)!.id }));
    expect(again).toEqual([]);
  });

  it('gives up with STREAM_RETRIES_EXHAUSTED when every connection breaks before an event', async () => {
    const cutAtOnce = await startDroppingProxy(h.url, 0);
    try {
      h.model.script({ text: 'never seen', delayMs: 300 });
      const { id } = await new AtsClient({ baseUrl: h.url, apiKey: API_KEY }).tasks.create({ message: 'cut' });
      const client = new AtsClient({ baseUrl: cutAtOnce.url, apiKey: API_KEY });
      const failure = await collect(client.tasks.stream(id, { retry: { retries: 3, baseDelayMs: 10 } })).catch((error: unknown) => error);
      expect(failure).toMatchObject({ name: 'AtsError', code: 'STREAM_RETRIES_EXHAUSTED', message: expect.stringContaining('4 times') });
      expect(cutAtOnce.drops).toBe(4);
      await collect(new AtsClient({ baseUrl: h.url, apiKey: API_KEY }).tasks.stream(id));
    } finally {
      await cutAtOnce.close();
    }
  });

  it('replaces a connection that goes silent (no event, no keep-alive) after idleTimeoutMs', async () => {
    let connections = 0;
    const silent = createServer((_req, res) => {
      connections++;
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(': hello\n\n');
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const client = new AtsClient({ baseUrl: `http://127.0.0.1:${(silent.address() as AddressInfo).port}`, apiKey: API_KEY });
      const started = Date.now();
      const failure = await collect(client.tasks.stream('task_x', { idleTimeoutMs: 200, retry: { retries: 1, baseDelayMs: 10 } })).catch(
        (error: unknown) => error,
      );
      expect(failure).toMatchObject({ code: 'STREAM_RETRIES_EXHAUSTED', message: expect.stringContaining('idleTimeoutMs') });
      expect(connections).toBe(2);
      expect(Date.now() - started).toBeLessThan(3_000);
    } finally {
      silent.closeAllConnections();
      silent.close();
    }
  });

  it('stops when the caller aborts, with the abort reason', async () => {
    h.model.script({ toolCalls: [{ name: 'list_files', arguments: {} }] });
    const client = new AtsClient({ baseUrl: h.url, apiKey: API_KEY });
    const { id } = await client.tasks.create({ message: 'wait for me', autoExecute: false });
    const controller = new AbortController();
    const seen: string[] = [];
    const failure = await (async () => {
      for await (const event of client.tasks.stream(id, { signal: controller.signal })) {
        seen.push(event.type);
        if (event.type === 'tool_call') controller.abort(new Error('enough'));
      }
    })().catch((error: unknown) => error);
    expect(seen).toContain('tool_call');
    expect(failure).toMatchObject({ message: 'enough' });
    await client.tasks.cancel(id);
  });
});
