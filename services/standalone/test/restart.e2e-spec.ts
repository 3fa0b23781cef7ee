import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ScriptedOpenAiServer, startScriptedOpenAiServer } from '@app/model-provider/testing/scripted-openai-server';
import { parseSseBlocks, readRawStream } from '../../../test/support/sse-client';
import { freePort, startServiceProcess } from '../../../test/support/service-process';

jest.setTimeout(120_000);

describe('The all-in-one service across a crash (kill -9) and restart on the same DATA_DIR', () => {
  let dataDir: string;
  let model: ScriptedOpenAiServer;
  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'ats-restart-'));
    model = await startScriptedOpenAiServer();
  });
  afterAll(async () => {
    await model.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('finishes a task whose model call was in flight, with no event lost or duplicated', async () => {
    const env = { DATA_DIR: dataDir, API_KEYS: 'restart-key', LLM_BASE_URL: model.url, LLM_MODEL: 'scripted', LLM_MAX_RETRIES: '0' };
    const auth = { authorization: 'Bearer restart-key', 'content-type': 'application/json' };
    const port = await freePort();
    model.script(
      { toolCalls: [{ name: 'write_file', arguments: { path: 'downloads/a.txt', content: 'before crash' } }] },
      { text: 'never delivered', delayMs: 30_000 },
      { text: 'finished after restart' },
    );

    const first = await startServiceProcess(env, port);
    const created = await fetch(`${first.url}/api/v1/tasks`, { method: 'POST', headers: auth, body: JSON.stringify({ message: 'survive a crash' }) });
    const id = ((await created.json()) as any).data.id;
    const until = Date.now() + 20_000;
    while (model.requests.length < 2) {
      if (Date.now() > until) throw new Error(`second model call never came:\n${first.output()}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    await first.kill9();

    const second = await startServiceProcess(env, port);
    try {
      const raw = await readRawStream(`${second.url}/api/v1/tasks/${id}/stream?after=0`, { authorization: 'Bearer restart-key' }, 30_000);
      const blocks = parseSseBlocks(raw.text).filter((b) => b.id);
      expect(blocks.map((b) => Number(b.id))).toEqual(blocks.map((_, i) => i + 1));
      expect(blocks.map((b) => b.event)).toEqual(['message', 'status', 'usage', 'tool_call', 'tool_started', 'tool_result', 'artifact', 'usage', 'content', 'done']);
      expect(JSON.parse(blocks[8].data).data.text).toBe('finished after restart');
      expect(JSON.parse(blocks[9].data).data.status).toBe('completed');
      const view = (await (await fetch(`${second.url}/api/v1/tasks/${id}`, { headers: auth })).json()) as any;
      expect(view.data.status).toBe('completed');
      const artifacts = (await (await fetch(`${second.url}/api/v1/tasks/${id}/artifacts`, { headers: auth })).json()) as any;
      expect(artifacts.files.map((f: { path: string }) => f.path)).toEqual(['downloads/a.txt']);
    } finally {
      await second.stop();
    }
  });
});
