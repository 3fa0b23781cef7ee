import { execFileSync } from 'node:child_process';
import { access, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ScriptedOpenAiServer, startScriptedOpenAiServer } from '@app/model-provider/testing/scripted-openai-server';
import { parseSseBlocks, readRawStream } from '../../../test/support/sse-client';
import { ServiceProcess, freePort, startServiceProcess } from '../../../test/support/service-process';

// Manual approval across real crashes: the service is killed with SIGKILL (no shutdown hook
// runs) while a tool runs, while a call awaits approval, and right after an approval POST
// returned; a new process on the same DATA_DIR must carry on with nothing lost, nothing
// duplicated and no approved tool run twice. SSE clients resume with Last-Event-ID.

jest.setTimeout(120_000);

const KEY = 'durable-key';
const headers = { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' };
const exists = (path: string) =>
  access(path).then(
    () => true,
    () => false,
  );
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Block {
  readonly id: number;
  readonly event: string;
  readonly data: Record<string, any>;
}

describe('Approvals and running tools across a kill -9 and restart', () => {
  let dataDir: string;
  let model: ScriptedOpenAiServer;
  let env: Record<string, string>;
  let port: number;
  let service: ServiceProcess | undefined;

  beforeAll(async () => {
    model = await startScriptedOpenAiServer();
  });
  beforeEach(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'ats-durable-'));
    env = { DATA_DIR: dataDir, API_KEYS: KEY, LLM_BASE_URL: model.url, LLM_MODEL: 'scripted', LLM_MAX_RETRIES: '0' };
    port = await freePort();
  });
  afterEach(async () => {
    await service?.stop();
    service = undefined;
    await rm(dataDir, { recursive: true, force: true });
  });
  afterAll(async () => model.close());

  const start = async () => (service = await startServiceProcess(env, port));
  const crash = async () => {
    await service!.kill9();
    service = undefined;
  };
  const api = async (path: string, init: { method?: string; json?: unknown } = {}) => {
    const res = await fetch(`http://127.0.0.1:${port}${path}`, {
      method: init.method ?? 'GET',
      headers,
      body: init.json === undefined ? undefined : JSON.stringify(init.json),
    });
    return { status: res.status, body: (await res.json()) as any };
  };
  const create = async (body: Record<string, unknown>) =>
    (await api('/api/v1/tasks', { method: 'POST', json: body })).body.data.id as string;
  const until = async <T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 20_000): Promise<T> => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const value = await probe();
      if (value !== undefined) return value;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}\n${service?.output() ?? ''}`);
      await sleep(50);
    }
  };
  const pendingCall = (id: string) =>
    until('a pending approval', async () => {
      const view = (await api(`/api/v1/tasks/${id}`)).body.data;
      return view.pendingApprovals.length === 1 ? (view.pendingApprovals[0].callId as string) : undefined;
    });
  /** The whole history, read after the stream ends with the latest turn's `done`. */
  const history = async (id: string, lastEventId?: number): Promise<Block[]> => {
    const extra: Record<string, string> = lastEventId === undefined ? {} : { 'last-event-id': String(lastEventId) };
    const path = lastEventId === undefined ? `/api/v1/tasks/${id}/stream?after=0` : `/api/v1/tasks/${id}/stream`;
    const raw = await readRawStream(`http://127.0.0.1:${port}${path}`, { authorization: `Bearer ${KEY}`, ...extra }, 30_000);
    return parseSseBlocks(raw.text)
      .filter((b) => b.id)
      .map((b) => ({ id: Number(b.id), event: b.event, data: JSON.parse(b.data).data }));
  };
  const expectGapless = (blocks: Block[], firstId = 1) => expect(blocks.map((b) => b.id)).toEqual(blocks.map((_, i) => firstId + i));
  const count = (blocks: Block[], event: string) => blocks.filter((b) => b.event === event).length;

  it('(b) a tool running at the crash is reported as interrupted, never run again, and the turn finishes', async () => {
    // Each run of the command leaves a line in starts.txt, and one that lives 3 s a line in
    // runs.txt; the comment is unique to this test, so ps finds this command and no other.
    const marker = `durability-b-${Date.now()}-${process.pid}`;
    const command = `mkdir -p downloads && echo started >> downloads/starts.txt && sleep 3 && echo ran >> downloads/runs.txt # ${marker}`;
    model.script({ toolCalls: [{ name: 'shell', arguments: { command } }] }, { text: 'carried on after the interruption' });
    await start();
    const id = await create({ message: 'run a slow command' });
    const downloads = join(dataDir, 'workspaces', id, 'downloads');
    const running = () =>
      execFileSync('ps', ['-eo', 'args'])
        .toString()
        .split('\n')
        .filter((l) => l.includes(marker));
    const started = async () => running().length > 0 && (await exists(join(downloads, 'starts.txt')));
    await until('the sandboxed command to run', async () => ((await started()) ? true : undefined));
    await crash();
    // The sandbox dies with the service (bubblewrap --die-with-parent): nothing keeps running.
    await until('the orphaned command to be gone', async () => (running().length === 0 ? true : undefined), 5_000);

    await start();
    const blocks = await history(id);
    expectGapless(blocks);
    expect(count(blocks, 'tool_started')).toBe(1);
    const result = blocks.find((b) => b.event === 'tool_result')!.data;
    expect(result).toMatchObject({ status: 'error', output: expect.stringContaining('Interrupted') });
    expect(blocks.at(-1)!.data.status).toBe('completed');
    await sleep(3500); // past the moment a second run, started after the restart, would have finished
    expect(await readFile(join(downloads, 'starts.txt'), 'utf8')).toBe('started\n');
    expect(await exists(join(downloads, 'runs.txt'))).toBe(false);
  });

  it('(c) a call awaiting approval survives the crash: still pending, decided after restart, run once; SSE resumes gaplessly', async () => {
    model.script(
      { toolCalls: [{ name: 'write_file', arguments: { path: 'downloads/approved.md', content: 'once' } }] },
      { text: 'written after restart' },
    );
    await start();
    const id = await create({ message: 'write after approval', autoExecute: false });
    const callId = await pendingCall(id);
    const before = (await api(`/api/v1/tasks/${id}`)).body.data;
    const seenBeforeCrash = before.lastEventId as number;
    await crash();

    await start();
    const after = (await api(`/api/v1/tasks/${id}`)).body.data;
    expect(after.status).toBe('awaiting_approval');
    expect(after.pendingApprovals).toEqual(before.pendingApprovals);
    expect(
      (await api(`/api/v1/tasks/${id}/tools/${callId}/approve`, { method: 'POST', json: { outcome: 'proceed_once' } })).body.data,
    ).toEqual({
      callId,
      outcome: 'proceed_once',
      approved: true,
    });
    const resumed = await history(id, seenBeforeCrash);
    expectGapless(resumed, seenBeforeCrash + 1);
    expect(resumed.map((b) => b.event)).toEqual(['tool_decision', 'tool_started', 'tool_result', 'artifact', 'usage', 'content', 'done']);
    expect(resumed.at(-1)!.data.status).toBe('completed');
    const whole = await history(id);
    expectGapless(whole);
    expect(count(whole, 'tool_call')).toBe(1);
    expect(await readFile(join(dataDir, 'workspaces', id, 'downloads', 'approved.md'), 'utf8')).toBe('once');
  });

  it('(d) an approval whose POST returned just before the crash is kept, and the tool runs at most once', async () => {
    model.script(
      { toolCalls: [{ name: 'shell', arguments: { command: 'mkdir -p downloads && echo ran >> downloads/runs.txt' } }] },
      { text: 'done after restart' },
    );
    await start();
    const id = await create({ message: 'append a line', autoExecute: false });
    const callId = await pendingCall(id);
    const approved = await api(`/api/v1/tasks/${id}/tools/${callId}/approve`, { method: 'POST', json: { outcome: 'proceed_once' } });
    expect(approved.status).toBe(200);
    await crash();

    await start();
    const blocks = await history(id);
    expectGapless(blocks);
    expect(blocks.filter((b) => b.event === 'tool_decision').map((b) => b.data)).toEqual([
      { callId, outcome: 'proceed_once', approved: true },
    ]);
    expect(count(blocks, 'tool_started')).toBe(1);
    expect(count(blocks, 'tool_result')).toBe(1);
    expect(blocks.at(-1)!.data.status).toBe('completed');
    expect((await api(`/api/v1/tasks/${id}`)).body.data.pendingApprovals).toEqual([]);
    // Either it ran to the end before the crash or after the restart (success, one line), or the
    // crash caught it running (interrupted, at most one line): never twice.
    const runs = await readFile(join(dataDir, 'workspaces', id, 'downloads', 'runs.txt'), 'utf8').catch(() => '');
    const result = blocks.find((b) => b.event === 'tool_result')!.data;
    if (result.status === 'success') expect(runs).toBe('ran\n');
    else
      expect({ output: result.output, runs: ['', 'ran\n'].includes(runs) }).toEqual({
        output: expect.stringContaining('Interrupted'),
        runs: true,
      });
  });

  it('(e) an approval timeout counts from the request, not from the restart: a crash mid-wait does not reset it', async () => {
    // Crashed half-way: a timer reset by the restart would fire at least half a timeout late.
    const timeoutMs = 12_000;
    const toleranceMs = 3_000;
    env.APPROVAL_TIMEOUT_MS = String(timeoutMs);
    model.script(
      { toolCalls: [{ name: 'write_file', arguments: { path: 'downloads/never.md', content: 'x' } }] },
      { text: 'nobody answered' },
    );
    await start();
    const id = await create({ message: 'wait for a decision nobody makes', autoExecute: false });
    const callId = await pendingCall(id);
    const requestedAt = Date.parse((await api(`/api/v1/tasks/${id}`)).body.data.pendingApprovals[0].requestedAt);
    await sleep(requestedAt + timeoutMs / 2 - Date.now());
    await crash();
    await start();
    const restartedAt = Date.now();
    const settled = async () => ((await api(`/api/v1/tasks/${id}`)).body.data.pendingApprovals.length === 0 ? true : undefined);
    await until('the call to expire', settled, 60_000);
    const expiredAt = Date.now();
    // Kept: it expires at request + timeout, or as soon as the service is back when that moment
    // passed while it was down (a loaded machine can take longer than the timeout to restart).
    // Reset: the new process takes up the task just before it answers, and waits a whole timeout more.
    expect(expiredAt - requestedAt).toBeGreaterThanOrEqual(timeoutMs);
    expect(expiredAt).toBeLessThan(Math.max(requestedAt + timeoutMs, restartedAt) + toleranceMs);

    const blocks = await history(id);
    expectGapless(blocks);
    const decisions = blocks.filter((b) => b.event === 'tool_decision').map((b) => b.data);
    expect(decisions).toEqual([{ callId, outcome: 'expired', approved: false, timeoutMs }]);
    expect(blocks.find((b) => b.event === 'tool_result')!.data).toMatchObject({ callId, status: 'cancelled' });
    expect(count(blocks, 'tool_started')).toBe(0);
    expect(blocks.at(-1)!.data.status).toBe('completed');
    // Two cold starts plus the wait: with other suites loading both cores it took 100-120 s, past the file's 120 s.
  }, 180_000);
});
