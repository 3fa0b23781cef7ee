import type { TaskStreamEvent } from '@agentic-task-service/client';
import type { Harness } from '../../../test/support/service-harness';
import { startHarness } from '../../../test/support/service-harness';
import { readRawStream } from '../../../test/support/sse-client';

// Through the typed client; the stream's raw wire text stays one of the surfaces checked for leaks.

const CANARY = 'canary-7f3a9c1e-secret';

describe('Secrets never reach the store, the read model or a response', () => {
  let h: Harness;
  beforeAll(async () => (h = await startHarness()));
  afterAll(async () => h.close());

  it('redacts a secret the model repeats (plain and base64) and keeps it out of DATA_DIR', async () => {
    const b64 = Buffer.from(CANARY).toString('base64');
    h.model.script(
      { text: `I see ${CANARY}`, toolCalls: [{ name: 'write_file', arguments: { path: 'downloads/leak.txt', content: `token ${b64}` } }] },
      { text: `done with ${encodeURIComponent(CANARY)}` },
    );
    const ats = h.client();
    const { id } = await ats.tasks.create({ message: 'use the token', secrets: { API_TOKEN: CANARY } });
    const events: TaskStreamEvent[] = [];
    for await (const event of ats.tasks.stream(id)) events.push(event);
    const contents = events.map((e) => (e.type === 'content' ? e.data.text : undefined)).filter((text) => text !== undefined);
    expect(contents).toEqual(['I see [REDACTED:API_TOKEN]', 'done with [REDACTED:API_TOKEN]']);
    const call = events.find((e) => e.type === 'tool_call');
    expect(call?.type === 'tool_call' && call.data.args).toEqual({
      path: 'downloads/leak.txt',
      content: 'token [REDACTED:API_TOKEN]',
    });

    // The model is told the secret's name, never its value.
    const system = h.model.requests[0].messages![0].content as string;
    expect(system).toContain('$API_TOKEN');
    expect(JSON.stringify(h.model.requests)).not.toContain(CANARY);

    // A schedule's secrets: sealed in its stream, names only in every answer.
    const schedule = await ats.schedules.create({
      cron: '0 0 1 1 *',
      task: { message: 'yearly', secrets: { API_TOKEN: CANARY } },
      paused: true,
    });
    expect(schedule.task.secretNames).toEqual(['API_TOKEN']);
    const surfaces = [
      JSON.stringify(schedule),
      JSON.stringify(await ats.schedules.get(schedule.id)),
      JSON.stringify(await ats.schedules.listPage()),
      JSON.stringify(await ats.tasks.get(id)),
      JSON.stringify(await ats.tasks.listPage()),
      JSON.stringify(events),
      (await readRawStream(`${h.url}/api/v1/tasks/${id}/stream?after=0`, { authorization: 'Bearer test-key-tenant-a' })).text,
      JSON.stringify((await h.api(`/api/v1/tasks/${id}/events`)).body),
    ];
    for (const text of surfaces) {
      expect(text).not.toContain(CANARY);
      expect(text).not.toContain(b64);
    }
    // Every file the service wrote (distributed: also the event rows, objects, workflow histories, logs).
    const persisted = await h.stopAndCollectPersisted();
    expect(persisted.length).toBeGreaterThan(0);
    for (const { where, bytes } of persisted) {
      expect({ where, leaked: bytes.includes(CANARY) || bytes.includes(b64) }).toEqual({ where, leaked: false });
    }
  });
});
