import { Harness, startHarness } from '../../../test/support/service-harness';
import { followStream, readRawStream } from '../../../test/support/sse-client';

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
    const res = await h.api('/api/v1/tasks', { method: 'POST', json: { message: 'use the token', secrets: { API_TOKEN: CANARY } } });
    const id = res.body.data.id;
    const events = await followStream(`${h.url}/api/v1/tasks/${id}/stream`, 'test-key-tenant-a');
    const contents = events.filter((e) => e.kind === 'content').map((e) => e.payload.data.text);
    expect(contents).toEqual(['I see [REDACTED:API_TOKEN]', 'done with [REDACTED:API_TOKEN]']);
    expect(events.find((e) => e.kind === 'tool_call')!.payload.data.args).toEqual({
      path: 'downloads/leak.txt',
      content: 'token [REDACTED:API_TOKEN]',
    });

    // The model is told the secret's name, never its value.
    const system = h.model.requests[0].messages![0].content as string;
    expect(system).toContain('$API_TOKEN');
    expect(JSON.stringify(h.model.requests)).not.toContain(CANARY);

    const surfaces = [
      JSON.stringify((await h.api(`/api/v1/tasks/${id}`)).body),
      JSON.stringify((await h.api('/api/v1/tasks')).body),
      (await readRawStream(`${h.url}/api/v1/tasks/${id}/stream?after=0`, { authorization: 'Bearer test-key-tenant-a' })).text,
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
