import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ScriptedOpenAiServer, startScriptedOpenAiServer } from '@app/model-provider/testing/scripted-openai-server';
import { parseSseBlocks, readRawStream } from '../../../test/support/sse-client';
import { ServiceProcess, freePort, startServiceProcess } from '../../../test/support/service-process';
import { persistedFiles } from '../../../test/support/persisted-files';

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
    const created = await fetch(`${first.url}/api/v1/tasks`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ message: 'survive a crash' }),
    });
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
      expect(blocks.map((b) => b.event)).toEqual([
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

describe('A task’s secrets across a crash (kill -9) and restart on the same DATA_DIR', () => {
  const TOKEN = `tok-${randomBytes(6).toString('hex')}-durable`;
  const auth = { authorization: 'Bearer restart-key', 'content-type': 'application/json' };
  let dataDir: string;
  let model: ScriptedOpenAiServer;
  let port: number;
  let env: Record<string, string>;
  let id: string;
  const logs: string[] = [];

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'ats-restart-secrets-'));
    model = await startScriptedOpenAiServer();
    port = await freePort();
    // No SECRETS_KEY: the all-in-one mode generates one under DATA_DIR on first start.
    env = { DATA_DIR: dataDir, API_KEYS: 'restart-key', LLM_BASE_URL: model.url, LLM_MODEL: 'scripted', LLM_MAX_RETRIES: '0' };
    // A FIFO named after the secret: a snapshot leaves it out and names it in the event.
    model.script({ toolCalls: [{ name: 'shell', arguments: { command: 'mkfifo "p-$TOKEN"' } }] }, { text: 'Ready.' });
    const first = await startServiceProcess(env, port);
    try {
      const created = await fetch(`${first.url}/api/v1/tasks`, {
        method: 'POST',
        headers: auth,
        body: JSON.stringify({ message: 'keep the token', secrets: { TOKEN } }),
      });
      id = ((await created.json()) as any).data.id;
      await turnBlocks(first);
    } finally {
      logs.push(first.output());
      await first.kill9();
    }
  });
  afterAll(async () => {
    await model.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  async function turnBlocks(service: ServiceProcess) {
    const raw = await readRawStream(`${service.url}/api/v1/tasks/${id}/stream`, { authorization: 'Bearer restart-key' }, 60_000);
    return parseSseBlocks(raw.text)
      .filter((b) => b.id)
      .map((b) => ({ event: b.event, data: JSON.parse(b.data).data }));
  }
  const followUp = (service: ServiceProcess, message: string) =>
    fetch(`${service.url}/api/v1/tasks/${id}/messages`, { method: 'POST', headers: auth, body: JSON.stringify({ message }) });

  it('generated its key once, in DATA_DIR/secrets.key (0600), saying where but never what', async () => {
    const path = join(dataDir, 'secrets.key');
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    expect(logs[0]).toContain(`generated the key that encrypts task secrets at rest, in ${path}`);
    const key = (await persistedFiles(dataDir))
      .find((f) => f.where === path)!
      .bytes.toString()
      .trim();
    expect(logs[0]).not.toContain(key);
  });

  it('keeps them: after kill -9 the sandbox masks the secret in what its snapshot skipped, a follow-up’s shell sees the right value, and `echo $TOKEN` is redacted', async () => {
    model.script(
      { toolCalls: [{ name: 'shell', arguments: { command: 'printf %s "$TOKEN" | sha256sum' } }] },
      { toolCalls: [{ name: 'shell', arguments: { command: 'echo $TOKEN' } }] },
      { text: 'Checked.' },
    );
    // The workspace left by the killed process is snapshotted before any call opened the secrets here.
    const second = await startServiceProcess({ ...env, SANDBOX_IDLE_TTL_MS: '1000' }, port);
    try {
      const until = Date.now() + 30_000;
      while (((await (await fetch(`${second.url}/api/v1/tasks/${id}`, { headers: auth })).json()) as any).data.sandbox !== 'expired') {
        if (Date.now() > until) throw new Error(`the sandbox never expired:\n${second.output()}`);
        await new Promise((r) => setTimeout(r, 200));
      }
      const all = parseSseBlocks(
        (await readRawStream(`${second.url}/api/v1/tasks/${id}/stream?after=0`, { authorization: 'Bearer restart-key' })).text,
      );
      const expired = JSON.parse(all.find((b) => b.event === 'sandbox')!.data).data;
      expect(expired.status).toBe('expired');
      expect(expired.skipped).toEqual([expect.stringMatching(/^p-\[REDACTED:TOKEN\]: /)]);
      expect((await followUp(second, 'check the token')).status).toBe(201);
      const blocks = await turnBlocks(second);
      const results = blocks.filter((b) => b.event === 'tool_result').map((b) => b.data);
      expect(results).toHaveLength(2);
      expect(results[0]).toMatchObject({ status: 'success' });
      expect(results[0].output).toContain(createHash('sha256').update(TOKEN).digest('hex'));
      expect(results[1]).toMatchObject({ status: 'success', output: '[REDACTED:TOKEN]\n' });
      expect(blocks.at(-1)).toEqual({ event: 'done', data: { status: 'completed', turn: 2 } });
      expect(blocks.some((b) => b.event === 'notice')).toBe(false);
      expect(blocks.find((b) => b.event === 'sandbox')!.data.status).toBe('restored');
    } finally {
      logs.push(second.output());
      await second.kill9();
    }
  });

  it('with a wrong SECRETS_KEY after a restart: the turn fails with a clear error, no command runs; the right key opens them again', async () => {
    const modelCalls = model.requests.length;
    const wrong = await startServiceProcess({ ...env, SECRETS_KEY: randomBytes(32).toString('base64') }, port);
    try {
      expect(wrong.output()).toMatch(
        /holds an earlier generated key \(key id [0-9a-f]{16}\) that is neither SECRETS_KEY nor in SECRETS_KEY_PREVIOUS/,
      );
      expect((await followUp(wrong, 'check the token again')).status).toBe(201);
      const blocks = await turnBlocks(wrong);
      expect(blocks.map((b) => b.event)).toEqual(['message', 'status', 'notice', 'done']);
      const done = blocks.at(-1)!.data;
      expect(done).toMatchObject({ status: 'failed', turn: 3 });
      expect(done.error).toMatch(
        /^Secrets TOKEN cannot be opened: they were sealed with key id [0-9a-f]{16}, and this process has only key id [0-9a-f]{16}/,
      );
      expect(done.error).toContain('The turn stopped so that nothing runs with these variables empty.');
      expect(blocks[2].data).toEqual({ code: 'SECRETS_UNAVAILABLE', names: ['TOKEN'], message: done.error });
      expect(model.requests.length).toBe(modelCalls);
      const view = (await (await fetch(`${wrong.url}/api/v1/tasks/${id}`, { headers: auth })).json()) as any;
      expect(view.data).toMatchObject({ status: 'failed', error: done.error, notices: [done.error], secretNames: ['TOKEN'] });
    } finally {
      logs.push(wrong.output());
      await wrong.kill9();
    }

    model.script({ toolCalls: [{ name: 'shell', arguments: { command: 'echo "again: $TOKEN"' } }] }, { text: 'Fine again.' });
    const right = await startServiceProcess(env, port);
    try {
      expect((await followUp(right, 'and now?')).status).toBe(201);
      const blocks = await turnBlocks(right);
      expect(blocks.find((b) => b.event === 'tool_result')!.data).toMatchObject({ status: 'success', output: 'again: [REDACTED:TOKEN]\n' });
      expect(blocks.at(-1)!.data).toEqual({ status: 'completed', turn: 4 });
    } finally {
      logs.push(right.output());
      await right.stop();
    }
  });

  it('left the value nowhere: not in DATA_DIR (event store, read model, key file), not in any log, not sent to the model', async () => {
    const forms = [TOKEN, Buffer.from(TOKEN).toString('base64'), encodeURIComponent(TOKEN)];
    const items = [
      ...(await persistedFiles(dataDir)),
      ...logs.map((text, i) => ({ where: `log of process ${i + 1}`, bytes: Buffer.from(text) })),
    ];
    items.push({ where: 'model requests', bytes: Buffer.from(JSON.stringify(model.requests)) });
    for (const { where, bytes } of items) {
      for (const form of forms) expect({ where, form, leaked: bytes.includes(form) }).toEqual({ where, form, leaked: false });
    }
  });
});
