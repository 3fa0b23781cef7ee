import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Harness, startHarness } from '../../../test/support/service-harness';
import { followStream, readRawStream } from '../../../test/support/sse-client';

const CANARY = 'canary-7f3a9c1e-secret';

async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries.filter((e) => e.isFile()).map((e) => join(e.parentPath ?? (e as unknown as { path: string }).path, e.name));
}

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
    expect(events.find((e) => e.kind === 'tool_call')!.payload.data.args).toEqual({ path: 'downloads/leak.txt', content: 'token [REDACTED:API_TOKEN]' });

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
    await h.app.close(); // flush checkpoints so every file the service writes is on disk
    for (const file of await filesUnder(h.dataDir)) {
      const bytes = await readFile(file);
      expect({ file, leaked: bytes.includes(CANARY) || bytes.includes(b64) }).toEqual({ file, leaked: false });
    }
  });
});
