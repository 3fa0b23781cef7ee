import { readdirSync, readFileSync } from 'node:fs';
import { access, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TaskStreamEvent } from '@agentic-task-service/client';
import { AtsClient } from '@agentic-task-service/client';
import type { ScriptedOpenAiServer } from '@app/model-provider/testing/scripted-openai-server';
import { startScriptedOpenAiServer } from '@app/model-provider/testing/scripted-openai-server';
import type { ServiceProcess } from '../../../test/support/service-process';
import { freePort, startServiceProcess } from '../../../test/support/service-process';
import { workspaceOf } from '../../../test/support/workspaces';

// Manual approval across real crashes: the service is killed with SIGKILL (no shutdown hook
// runs) while a tool runs, while a call awaits approval, and right after an approval POST
// returned; a new process on the same DATA_DIR must carry on with nothing lost, nothing
// duplicated and no approved tool run twice. SSE clients resume with Last-Event-ID.

jest.setTimeout(120_000);

const KEY = 'durable-key';
const exists = (path: string) =>
  access(path).then(
    () => true,
    () => false,
  );
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The data of the events of one type, in order. */
const dataOf = <T extends TaskStreamEvent['type']>(events: TaskStreamEvent[], type: T) =>
  events.flatMap((e) => (e.type === type ? [e.data as Extract<TaskStreamEvent, { type: T }>['data']] : []));

describe('Approvals and running tools across a kill -9 and restart', () => {
  let dataDir: string;
  let model: ScriptedOpenAiServer;
  let env: Record<string, string>;
  let port: number;
  let service: ServiceProcess | undefined;
  // One client per test: every process of a test listens on the same port.
  let ats: AtsClient;

  beforeAll(async () => {
    model = await startScriptedOpenAiServer();
  });
  beforeEach(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'ats-durable-'));
    env = { DATA_DIR: dataDir, API_KEYS: KEY, LLM_BASE_URL: model.url, LLM_MODEL: 'scripted', LLM_MAX_RETRIES: '0' };
    port = await freePort();
    ats = new AtsClient({ baseUrl: `http://127.0.0.1:${port}`, apiKey: KEY });
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
      const view = await ats.tasks.get(id);
      return view.pendingApprovals.length === 1 ? view.pendingApprovals[0].callId : undefined;
    });
  /**
   * The whole history, or what follows `lastEventId` (the client sends it as Last-Event-ID), read
   * until the stream ends with the latest turn's `done`. No reconnects: an early end must fail.
   */
  const history = async (id: string, lastEventId = 0): Promise<TaskStreamEvent[]> => {
    const events: TaskStreamEvent[] = [];
    for await (const event of ats.tasks.stream(id, { after: lastEventId, retry: { retries: 0 } })) events.push(event);
    return events;
  };
  const expectGapless = (events: TaskStreamEvent[], firstId = 1) =>
    expect(events.map((e) => e.id)).toEqual(events.map((_, i) => firstId + i));
  const count = (events: TaskStreamEvent[], type: TaskStreamEvent['type']) => events.filter((e) => e.type === type).length;

  it('(b) a tool running at the crash is reported as interrupted, never run again, and the turn finishes', async () => {
    // Each run of the command leaves a line in starts.txt, and one that lives 3 s a line in
    // runs.txt; the comment is unique to this test, so this command and no other is found by it
    // (in the environment its shell was started with: a command is on no command line).
    const marker = `durability-b-${Date.now()}-${process.pid}`;
    const command = `mkdir -p downloads && echo started >> downloads/starts.txt && sleep 3 && echo ran >> downloads/runs.txt # ${marker}`;
    model.script({ toolCalls: [{ name: 'shell', arguments: { command } }] }, { text: 'carried on after the interruption' });
    await start();
    const { id } = await ats.tasks.create({ message: 'run a slow command' });
    const downloads = join(workspaceOf(dataDir, id), 'downloads');
    const running = () =>
      readdirSync('/proc')
        .filter((pid) => /^\d+$/.test(pid))
        .filter((pid) => {
          try {
            return readFileSync(`/proc/${pid}/environ`).includes(marker);
          } catch {
            return false; // gone meanwhile
          }
        });
    const started = async () => running().length > 0 && (await exists(join(downloads, 'starts.txt')));
    await until('the sandboxed command to run', async () => ((await started()) ? true : undefined));
    await crash();
    // The sandbox dies with the service (bubblewrap --die-with-parent): nothing keeps running.
    await until('the orphaned command to be gone', async () => (running().length === 0 ? true : undefined), 5_000);

    await start();
    const events = await history(id);
    expectGapless(events);
    expect(count(events, 'tool_started')).toBe(1);
    const result = dataOf(events, 'tool_result')[0];
    expect(result).toMatchObject({ status: 'error', output: expect.stringContaining('Interrupted') });
    expect(events.at(-1)).toMatchObject({ type: 'done', data: { status: 'completed' } });
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
    const { id } = await ats.tasks.create({ message: 'write after approval', autoExecute: false });
    const callId = await pendingCall(id);
    const before = await ats.tasks.get(id);
    const seenBeforeCrash = before.lastEventId;
    await crash();

    await start();
    const after = await ats.tasks.get(id);
    expect(after.status).toBe('awaiting_approval');
    expect(after.pendingApprovals).toEqual(before.pendingApprovals);
    expect(await ats.tasks.approve(id, callId, 'proceed_once')).toEqual({ callId, outcome: 'proceed_once', approved: true });
    const resumed = await history(id, seenBeforeCrash);
    expectGapless(resumed, seenBeforeCrash + 1);
    expect(resumed.map((e) => e.type)).toEqual(['tool_decision', 'tool_started', 'tool_result', 'artifact', 'usage', 'content', 'done']);
    expect(resumed.at(-1)).toMatchObject({ type: 'done', data: { status: 'completed' } });
    const whole = await history(id);
    expectGapless(whole);
    expect(count(whole, 'tool_call')).toBe(1);
    expect(await readFile(join(workspaceOf(dataDir, id), 'downloads', 'approved.md'), 'utf8')).toBe('once');
  });

  it('(d) an approval whose POST returned just before the crash is kept, and the tool runs at most once', async () => {
    model.script(
      { toolCalls: [{ name: 'shell', arguments: { command: 'mkdir -p downloads && echo ran >> downloads/runs.txt' } }] },
      { text: 'done after restart' },
    );
    await start();
    const { id } = await ats.tasks.create({ message: 'append a line', autoExecute: false });
    const callId = await pendingCall(id);
    expect(await ats.tasks.approve(id, callId, 'proceed_once')).toEqual({ callId, outcome: 'proceed_once', approved: true });
    await crash();

    await start();
    const events = await history(id);
    expectGapless(events);
    expect(dataOf(events, 'tool_decision')).toEqual([{ callId, outcome: 'proceed_once', approved: true }]);
    expect(count(events, 'tool_started')).toBe(1);
    expect(count(events, 'tool_result')).toBe(1);
    expect(events.at(-1)).toMatchObject({ type: 'done', data: { status: 'completed' } });
    expect((await ats.tasks.get(id)).pendingApprovals).toEqual([]);
    // Either it ran to the end before the crash or after the restart (success, one line), or the
    // crash caught it running (interrupted, at most one line): never twice.
    const runs = await readFile(join(workspaceOf(dataDir, id), 'downloads', 'runs.txt'), 'utf8').catch(() => '');
    const result = dataOf(events, 'tool_result')[0];
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
    const { id } = await ats.tasks.create({ message: 'wait for a decision nobody makes', autoExecute: false });
    const callId = await pendingCall(id);
    const requestedAt = Date.parse((await ats.tasks.get(id)).pendingApprovals[0].requestedAt);
    await sleep(requestedAt + timeoutMs / 2 - Date.now());
    await crash();
    await start();
    const restartedAt = Date.now();
    const settled = async () => ((await ats.tasks.get(id)).pendingApprovals.length === 0 ? true : undefined);
    await until('the call to expire', settled, 60_000);
    const expiredAt = Date.now();
    // Kept: it expires at request + timeout, or as soon as the service is back when that moment
    // passed while it was down (a loaded machine can take longer than the timeout to restart).
    // Reset: the new process takes up the task just before it answers, and waits a whole timeout more.
    expect(expiredAt - requestedAt).toBeGreaterThanOrEqual(timeoutMs);
    expect(expiredAt).toBeLessThan(Math.max(requestedAt + timeoutMs, restartedAt) + toleranceMs);

    const events = await history(id);
    expectGapless(events);
    expect(dataOf(events, 'tool_decision')).toEqual([{ callId, outcome: 'expired', approved: false, timeoutMs }]);
    expect(dataOf(events, 'tool_result')[0]).toMatchObject({ callId, status: 'cancelled' });
    expect(count(events, 'tool_started')).toBe(0);
    expect(events.at(-1)).toMatchObject({ type: 'done', data: { status: 'completed' } });
    // Two cold starts plus the wait: with other suites loading both cores it took 100-120 s, past the file's 120 s.
  }, 180_000);
});
