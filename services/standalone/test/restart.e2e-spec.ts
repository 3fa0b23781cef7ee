import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TaskStreamEvent } from '@agentic-task-service/client';
import { AtsClient } from '@agentic-task-service/client';
import type { ScriptedOpenAiServer } from '@app/model-provider/testing/scripted-openai-server';
import { startScriptedOpenAiServer } from '@app/model-provider/testing/scripted-openai-server';
import type { ServiceProcess } from '../../../test/support/service-process';
import { freePort, startServiceProcess } from '../../../test/support/service-process';
import { persistedFiles } from '../../../test/support/persisted-files';

jest.setTimeout(120_000);

/** The typed client of one process of the service. */
const clientOf = (service: ServiceProcess) => new AtsClient({ baseUrl: service.url, apiKey: 'restart-key' });

/**
 * A task's events: its whole history with `after: 0`, else its latest turn, until the stream
 * ends. No reconnects: a stream the restarted service ended early must fail the test, not be
 * resumed behind its back.
 */
async function streamed(service: ServiceProcess, id: string, after?: number): Promise<TaskStreamEvent[]> {
  const events: TaskStreamEvent[] = [];
  for await (const event of clientOf(service).tasks.stream(id, { after, retry: { retries: 0 } })) events.push(event);
  return events;
}

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
    const port = await freePort();
    model.script(
      { toolCalls: [{ name: 'write_file', arguments: { path: 'downloads/a.txt', content: 'before crash' } }] },
      { text: 'never delivered', delayMs: 30_000 },
      { text: 'finished after restart' },
    );

    const first = await startServiceProcess(env, port);
    const { id } = await clientOf(first).tasks.create({ message: 'survive a crash' });
    const until = Date.now() + 20_000;
    while (model.requests.length < 2) {
      if (Date.now() > until) throw new Error(`second model call never came:\n${first.output()}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    await first.kill9();

    const second = await startServiceProcess(env, port);
    try {
      // An event recorded twice would have an id of its own: the gapless ids and the exact kinds catch it.
      const events = await streamed(second, id, 0);
      expect(events.map((e) => e.id)).toEqual(events.map((_, i) => i + 1));
      expect(events.map((e) => e.type)).toEqual([
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
      expect(events[8]).toMatchObject({ type: 'content', data: { text: 'finished after restart' } });
      expect(events[9]).toMatchObject({ type: 'done', data: { status: 'completed' } });
      expect((await clientOf(second).tasks.get(id)).status).toBe('completed');
      expect((await clientOf(second).artifacts.list(id)).map((f) => f.path)).toEqual(['downloads/a.txt']);
      // Time travel survives the crash: the files as of the tool_result, and a fork after the done.
      const ats = clientOf(second);
      expect((await ats.files.list(id, { at: 6 })).files.map((f) => f.path)).toEqual(['downloads/a.txt']);
      expect(new TextDecoder().decode((await ats.files.download(id, 'downloads/a.txt', { at: 6 })).body)).toBe('before crash');
      const fork = await ats.tasks.fork(id, { afterEventId: 10 });
      expect(fork).toMatchObject({ status: 'completed', forkedFrom: { taskId: id, eventId: 10 } });
      expect((await ats.files.list(fork.id)).files.map((f) => f.path)).toEqual(['downloads/a.txt']);
    } finally {
      await second.stop();
    }
  });
});

describe('A task’s secrets across a crash (kill -9) and restart on the same DATA_DIR', () => {
  const TOKEN = `tok-${randomBytes(6).toString('hex')}-durable`;
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
      id = (await clientOf(first).tasks.create({ message: 'keep the token', secrets: { TOKEN } })).id;
      await turn(first);
    } finally {
      logs.push(first.output());
      await first.kill9();
    }
  });
  afterAll(async () => {
    await model.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  /** The latest turn's events, without their ids. */
  const turn = async (service: ServiceProcess) => (await streamed(service, id)).map(({ type, data }) => ({ type, data }));
  /** Sends a follow-up and checks the service accepted it into this task. */
  const followUp = async (service: ServiceProcess, message: string) =>
    expect(await clientOf(service).tasks.sendMessage(id, message)).toMatchObject({ id, messageId: expect.stringMatching(/^msg_/) });
  const dataOf = <T extends TaskStreamEvent['type']>(events: { type: string; data: unknown }[], type: T) =>
    events.flatMap((e) => (e.type === type ? [e.data as Extract<TaskStreamEvent, { type: T }>['data']] : []));

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
      while ((await clientOf(second).tasks.get(id)).sandbox !== 'expired') {
        if (Date.now() > until) throw new Error(`the sandbox never expired:\n${second.output()}`);
        await new Promise((r) => setTimeout(r, 200));
      }
      const [expired] = dataOf(await streamed(second, id, 0), 'sandbox');
      expect(expired).toMatchObject({ status: 'expired', skipped: [expect.stringMatching(/^p-\[REDACTED:TOKEN\]: /)] });
      await followUp(second, 'check the token');
      const events = await turn(second);
      const results = dataOf(events, 'tool_result');
      expect(results).toHaveLength(2);
      expect(results[0]).toMatchObject({ status: 'success' });
      expect(results[0].output).toContain(createHash('sha256').update(TOKEN).digest('hex'));
      expect(results[1]).toMatchObject({ status: 'success', output: '[REDACTED:TOKEN]\n' });
      expect(events.at(-1)).toEqual({
        type: 'done',
        data: { status: 'completed', turn: 2, usage: expect.objectContaining({ totalTokens: expect.any(Number) }) },
      });
      expect(events.some((b) => b.type === 'notice')).toBe(false);
      expect(dataOf(events, 'sandbox')[0].status).toBe('restored');
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
      await followUp(wrong, 'check the token again');
      const events = await turn(wrong);
      expect(events.map((b) => b.type)).toEqual(['message', 'status', 'notice', 'done']);
      const done = dataOf(events, 'done')[0];
      expect(done).toMatchObject({ status: 'failed', turn: 3 });
      expect(done.error).toMatch(
        /^Secrets TOKEN cannot be opened: they were sealed with key id [0-9a-f]{16}, and this process has only key id [0-9a-f]{16}/,
      );
      expect(done.error).toContain('The turn stopped so that nothing runs with these variables empty.');
      expect(events[2].data).toEqual({ code: 'SECRETS_UNAVAILABLE', names: ['TOKEN'], message: done.error });
      expect(model.requests.length).toBe(modelCalls);
      expect(await clientOf(wrong).tasks.get(id)).toMatchObject({
        status: 'failed',
        error: done.error,
        notices: [done.error],
        secretNames: ['TOKEN'],
      });
    } finally {
      logs.push(wrong.output());
      await wrong.kill9();
    }

    model.script({ toolCalls: [{ name: 'shell', arguments: { command: 'echo "again: $TOKEN"' } }] }, { text: 'Fine again.' });
    const right = await startServiceProcess(env, port);
    try {
      await followUp(right, 'and now?');
      const events = await turn(right);
      expect(dataOf(events, 'tool_result')[0]).toMatchObject({ status: 'success', output: 'again: [REDACTED:TOKEN]\n' });
      expect(events.at(-1)).toEqual({
        type: 'done',
        data: { status: 'completed', turn: 4, usage: expect.objectContaining({ totalTokens: expect.any(Number) }) },
      });
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
