import { request } from 'node:http';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ScriptedOpenAiServer } from '@app/model-provider/testing/scripted-openai-server';
import { startScriptedOpenAiServer } from '@app/model-provider/testing/scripted-openai-server';
import { freePort, startServiceProcess } from '../../../test/support/service-process';
import { parseSseBlocks, readRawStream } from '../../../test/support/sse-client';
import { workspaceOf } from '../../../test/support/workspaces';

jest.setTimeout(120_000);

const KEY = 'shutdown-key';
const SHUTDOWN_TIMEOUT_MS = 5_000;
const auth = { authorization: `Bearer ${KEY}` };

/** Reads a stream as it arrives, so the test can act once `ready` says the text is far enough. */
async function openStream(url: string, ready: (text: string) => boolean): Promise<{ whole: Promise<string> }> {
  const response = await fetch(url, { headers: auth, signal: AbortSignal.timeout(60_000) });
  expect(response.status).toBe(200);
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  let text = '';
  let signalReady!: () => void;
  const isReady = new Promise<void>((resolve) => (signalReady = resolve));
  const whole = (async () => {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return text;
      text += value;
      if (ready(text)) signalReady();
    }
  })();
  await Promise.race([isReady, whole]);
  return { whole };
}

describe('The all-in-one service on SIGTERM', () => {
  let dataDir: string;
  let model: ScriptedOpenAiServer;
  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'ats-shutdown-'));
    model = await startScriptedOpenAiServer();
  });
  afterAll(async () => {
    await model.close();
    await rm(dataDir, { recursive: true, force: true });
  });
  /** The service's variables: this file's data dir and scripted model, and the test's own. */
  const serviceEnv = (extra: Record<string, string> = {}) => ({
    DATA_DIR: dataDir,
    API_KEYS: KEY,
    LLM_BASE_URL: model.url,
    LLM_MODEL: 'scripted',
    LLM_MAX_RETRIES: '0',
    ...extra,
  });

  it('ends the stream with a reconnect comment, exits 0 promptly, and the resumed stream misses nothing', async () => {
    const env = serviceEnv({ SHUTDOWN_TIMEOUT_MS: String(SHUTDOWN_TIMEOUT_MS) });
    const port = await freePort();
    model.script(
      { toolCalls: [{ name: 'write_file', arguments: { path: 'downloads/a.txt', content: 'before shutdown' } }] },
      // In flight at SIGTERM: the step is handed back, and asked again after the restart.
      { hang: true },
      { text: 'finished after restart' },
    );
    const first = await startServiceProcess(env, port);
    const create = await fetch(`${first.url}/api/v1/tasks`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ message: 'survive a shutdown' }),
    });
    const { id } = ((await create.json()) as { data: { id: string } }).data;
    const until = Date.now() + 20_000;
    while (model.requests.length < 2) {
      if (Date.now() > until) throw new Error(`second model call never came:\n${first.output()}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    const stream = await openStream(`${first.url}/api/v1/tasks/${id}/stream`, (text) => text.includes('event: tool_result'));

    const exit = await first.terminate();
    const text = await stream.whole;
    expect(exit).toMatchObject({ code: 0, signal: null });
    expect(exit.ms).toBeLessThan(SHUTDOWN_TIMEOUT_MS);
    expect(first.output()).toMatch(/SIGTERM: shutting down[\s\S]*shut down in \d+ ms/);
    const blocks = parseSseBlocks(text);
    // The last block says why the stream ends and when to come back; no event follows it.
    expect(blocks.at(-1)).toEqual({ comment: 'shutting down, reconnect with Last-Event-ID', retry: '1000' });
    const before = blocks.filter((b) => b.id).map((b) => Number(b.id));
    expect(before).toEqual(before.map((_, i) => i + 1));
    expect(blocks.some((b) => b.event === 'done')).toBe(false);

    const second = await startServiceProcess(env, port);
    try {
      const lastEventId = String(before.at(-1));
      const rest = parseSseBlocks(
        (await readRawStream(`${second.url}/api/v1/tasks/${id}/stream`, { ...auth, 'last-event-id': lastEventId })).text,
      );
      const after = rest.filter((b) => b.id);
      // Resumed right after the last event the first stream delivered: together, the whole history once.
      const all = [...blocks.filter((b) => b.id), ...after];
      const history = parseSseBlocks((await readRawStream(`${second.url}/api/v1/tasks/${id}/stream?after=0`, auth)).text).filter(
        (b) => b.id,
      );
      expect(all).toEqual(history);
      expect(JSON.parse(all.at(-1)!.data)).toMatchObject({ type: 'done', data: { status: 'completed' } });
      expect(all.filter((b) => b.event === 'content').map((b) => JSON.parse(b.data).data.text)).toEqual(['finished after restart']);
    } finally {
      await second.stop();
    }
  });

  it('starts no step while the sandbox lets a running command finish: a call started then would find no sandbox', async () => {
    const env = serviceEnv({ SHUTDOWN_TIMEOUT_MS: '15000' });
    model.script(
      // Task A: a command still running at SIGTERM, which the sandbox lets finish (grace 12 s).
      { toolCalls: [{ name: 'shell', arguments: { command: 'echo started > a.log; sleep 4; echo finished >> a.log' } }] },
      // Task B: its model answers during that grace. Before, its loop went on to run the call,
      // which found the sandbox no longer taking any, and was reported interrupted after the restart.
      { toolCalls: [{ name: 'shell', arguments: { command: 'echo ran > b.log' } }], delayMs: 2_000 },
    );
    // The model server is shared by this file's tests: its requests are counted from here.
    const modelCallsBefore = model.requests.length;
    const port = await freePort();
    const first = await startServiceProcess(env, port);
    const create = async (message: string) => {
      const res = await fetch(`${first.url}/api/v1/tasks`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify({ message }),
      });
      return ((await res.json()) as { data: { id: string } }).data.id;
    };
    const a = await create('a long command');
    const aLog = join(workspaceOf(dataDir, a), 'a.log');
    const until = Date.now() + 20_000;
    while (!(await readFile(aLog, 'utf8').catch(() => ''))) {
      if (Date.now() > until) throw new Error(`the command never started:\n${first.output()}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    const b = await create('a short command');
    while (model.requests.length < modelCallsBefore + 2) {
      if (Date.now() > until) throw new Error(`task B never called the model:\n${first.output()}`);
      await new Promise((r) => setTimeout(r, 20));
    }

    const exit = await first.terminate();
    expect(exit).toMatchObject({ code: 0, signal: null });
    expect(await readFile(aLog, 'utf8')).toBe('started\nfinished\n');

    model.script({ text: 'done' }, { text: 'done' });
    const second = await startServiceProcess(env, port);
    try {
      for (const id of [a, b]) {
        const blocks = parseSseBlocks((await readRawStream(`${second.url}/api/v1/tasks/${id}/stream?after=0`, auth)).text).filter(
          (block) => block.id,
        );
        const results = blocks.filter((block) => block.event === 'tool_result').map((block) => JSON.parse(block.data).data);
        expect(results).toEqual([expect.objectContaining({ status: 'success', output: expect.not.stringContaining('Interrupted') })]);
        expect(JSON.parse(blocks.at(-1)!.data)).toMatchObject({ type: 'done', data: { status: 'completed' } });
      }
      expect(await readFile(join(workspaceOf(dataDir, b), 'b.log'), 'utf8')).toBe('ran\n');
    } finally {
      await second.stop();
    }
  });

  it('finishes a request in flight at SIGTERM before it exits 0', async () => {
    const env = serviceEnv();
    model.script({ text: 'done' });
    const service = await startServiceProcess(env, await freePort());
    // A create whose body is still arriving when the signal comes.
    const body = JSON.stringify({ message: 'sent slowly' });
    const answer = new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = request(
        `${service.url}/api/v1/tasks`,
        { method: 'POST', headers: { ...auth, 'content-type': 'application/json', 'content-length': String(body.length) } },
        (res) => {
          let text = '';
          res.on('data', (chunk) => (text += chunk));
          res.on('end', () => resolve({ status: res.statusCode!, text }));
        },
      );
      req.on('error', reject);
      req.write(body.slice(0, 5));
      setTimeout(() => {
        service.child.kill('SIGTERM');
        setTimeout(() => req.end(body.slice(5)), 500);
      }, 300);
    });
    const exited = new Promise<number | null>((resolve) => service.child.once('exit', (code) => resolve(code)));
    const { status, text } = await answer;
    expect(status).toBe(201);
    expect(JSON.parse(text)).toMatchObject({ success: true, data: { status: 'pending' } });
    expect(await exited).toBe(0);
    expect(service.output()).toMatch(/SIGTERM: shutting down[\s\S]*shut down in \d+ ms/);
  });
});
