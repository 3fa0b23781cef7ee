import { execFileSync } from 'node:child_process';
import type { AtsClient, TaskEventRecord } from '@agentic-task-service/client';
import type { Harness } from '../../../test/support/service-harness';
import { API_KEY, OTHER_API_KEY, startHarness, waitFor } from '../../../test/support/service-harness';
import { rawExchange } from '../../../test/support/raw-exchange';

// POST /tasks/{id}/messages with `ifRunning` (docs/api.md "Follow-ups") through the whole service
// with the scripted model: reject records nothing, interrupt stops the turn as a cancel does and
// starts the message's turn with the whole context, rollback also brings the workspace back to the
// turn's start and leaves the turn out of what the model is sent; concurrent interrupts and an
// interrupt racing an approval have exactly one winner. CHECKPOINT_RETENTION=last:2 so that a
// turn whose start is no longer kept can be shown refusing its rollback.
//
// Waits are bounded as the other distributed suites bound theirs (30 s): in the e2e-distributed
// project a turn goes API → Temporal → orchestrator → the model → NATS → a sandbox instance → bwrap.

describe('Follow-ups sent while a turn runs (ifRunning)', () => {
  let h: Harness;
  let ats: AtsClient;
  beforeAll(async () => {
    h = await startHarness({ CHECKPOINT_RETENTION: 'last:2' });
    ats = h.client();
  });
  afterAll(async () => h.close());

  // Each test starts from a clean slate. One that failed half-way would otherwise leave its task
  // running (a sandboxed command, a turn that asks the model again once it ends) and the scripted
  // replies it did not use, which the next tests' tasks would take instead of their own: one
  // failure would fail the tests after it.
  const created: string[] = [];
  const create = async (request: Parameters<AtsClient['tasks']['create']>[0]) => {
    const task = await ats.tasks.create(request);
    created.push(task.id);
    return task;
  };
  afterEach(async () => {
    for (const id of created.splice(0)) {
      if (['running', 'pending', 'awaiting_approval'].includes(await status(id))) {
        await ats.tasks.cancel(id).catch(() => undefined);
        await finished(id);
      }
    }
    h.model.clear();
  });

  const send = (id: string, json: unknown, key?: string) => h.api(`/api/v1/tasks/${id}/messages`, { method: 'POST', json, key });
  const history = async (id: string): Promise<TaskEventRecord[]> => {
    const events: TaskEventRecord[] = [];
    for await (const event of ats.tasks.history(id)) events.push(event);
    return events;
  };
  const status = async (id: string) => (await ats.tasks.get(id)).status;
  const until = (id: string, wanted: (s: string) => boolean, what: string) =>
    waitFor(async () => ((s) => (wanted(s) ? s : undefined))(await status(id)), 30_000, what);
  const finished = (id: string) => until(id, (s) => !['running', 'pending', 'awaiting_approval'].includes(s), `task ${id} to finish`);
  /**
   * Waits until the model was asked with `message`: a turn reads `running` before its first
   * request has reached the model, and a turn cancelled then may or may not still send it (the
   * distributed mode's step learns of the cancel only through its activity's heartbeat). A
   * reply scripted for it would then be left queued, and the next test's task would take it.
   */
  const asked = (message: string) =>
    waitFor(
      () => h.model.requests.some((r) => r.messages?.some((m) => m.role === 'user' && m.content === message)) || undefined,
      30_000,
      `the model to be asked "${message}"`,
    );
  const marker = () => `${Date.now() % 100000}${process.pid}`;
  const sleeping = (mark: string) =>
    execFileSync('ps', ['-eo', 'args'])
      .toString()
      .split('\n')
      .filter((l) => l.includes(mark) && l.startsWith('sleep'));
  /**
   * Waits until `count` processes `sleep …<mark>` of the task's shell call run (the host's ps sees
   * into bwrap's PID namespace). Should the call end before they were seen (the sandbox answered
   * an error, say), the wait fails at once with the call's result; on a timeout it says where the
   * task is. Either way a failure tells what the sandbox did, not only that nothing was seen.
   */
  async function commandRuns(id: string, mark: string, count: number, what: string): Promise<void> {
    let lookedAt = 0;
    const callOf = (events: TaskEventRecord[]) => {
      const call = events.find(
        (e) => e.type === 'tool_call' && (e.data as { args?: { command?: unknown } }).args?.command?.toString().includes(mark),
      );
      const callId = (call?.data as { callId?: string } | undefined)?.callId;
      return { callId, result: events.find((e) => e.type === 'tool_result' && (e.data as { callId: string }).callId === callId) };
    };
    try {
      await waitFor(
        async () => {
          if (sleeping(mark).length === count) return true;
          if (Date.now() - lookedAt < 250) return undefined;
          lookedAt = Date.now();
          const { result } = callOf(await history(id));
          if (result) throw new Error(`${what}: the call ended before its ${count} process(es) were seen: ${JSON.stringify(result.data)}`);
          return undefined;
        },
        30_000,
        what,
      );
    } catch (error) {
      if (!(error instanceof Error) || !error.message.startsWith('timed out')) throw error;
      const events = await history(id);
      const { callId } = callOf(events);
      const seen = sleeping(mark).length;
      throw new Error(
        `${error.message}: ${seen} of ${count} process(es) seen; task ${await status(id)}, ` +
          `${callId ? `call ${callId} still running` : 'the call not made yet'}; its events: ${events.map((e) => (e.type === 'content' || e.type === 'done' ? `${e.type} ${JSON.stringify(e.data).slice(0, 120)}` : e.type)).join(', ')}; ` +
          `the model's last requests: ${JSON.stringify(h.model.requests.slice(-4).map((r) => [`${r.tools?.length ?? 0} tools`, ...(r.messages ?? []).map((m) => `${m.role}: ${String(m.content).slice(0, 40)}`)]))}`,
        { cause: error },
      );
    }
  }
  /**
   * POSTs each body to its path at the same moment: all of them pipelined in one write on one
   * connection, so the service has every one in hand, parsed in the same turn of its event loop,
   * before it answers any. Separate connections would race the client's own writes instead.
   */
  const atOnce = async (requests: readonly { path: string; json: unknown }[]) => {
    const wire = requests
      .map(({ path, json }, i) => {
        const body = JSON.stringify(json);
        const close = i === requests.length - 1 ? 'close' : 'keep-alive';
        return (
          `POST ${path} HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${API_KEY}\r\nContent-Type: application/json\r\n` +
          `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: ${close}\r\n\r\n${body}`
        );
      })
      .join('');
    const { response } = await rawExchange(h.url, [wire], { waitMs: 10_000 });
    return splitResponses(response);
  };
  /** A task whose first call waits for approval. */
  async function waitingForApproval(): Promise<{ id: string; callId: string }> {
    h.model.script({ toolCalls: [{ name: 'shell', arguments: { command: 'ls' } }] });
    const { id } = await create({ message: 'list the files', autoExecute: false });
    const view = await waitFor(
      async () => {
        const v = await ats.tasks.get(id);
        return v.pendingApprovals.length === 1 ? v : undefined;
      },
      30_000,
      'the call to wait for approval',
    );
    return { id, callId: view.pendingApprovals[0].callId };
  }

  it('reject: 409 CONFLICT while a turn runs, and nothing is recorded', async () => {
    h.model.script({ hang: true });
    const { id } = await create({ message: 'slow' });
    await until(id, (s) => s === 'running', 'the turn to run');
    await asked('slow');
    const before = await history(id);
    const answer = await send(id, { message: 'not now', ifRunning: 'reject' });
    expect(answer.status).toBe(409);
    expect(answer.body).toEqual({ success: false, error: { code: 'CONFLICT', message: expect.stringContaining('reject') } });
    // The multipart text field is read the same way.
    const form = new FormData();
    form.append('message', 'not now either');
    form.append('ifRunning', 'reject');
    const multipart = await h.api(`/api/v1/tasks/${id}/messages`, { method: 'POST', body: form });
    expect(multipart.status).toBe(409);
    expect(await history(id)).toEqual(before);
    await ats.tasks.cancel(id);
  });

  it('refuses a value outside the four, JSON or multipart, with a 400 in the envelope', async () => {
    h.model.script({ text: 'ok' });
    const { id } = await create({ message: 'hi' });
    for (const ifRunning of ['maybe', '', 'INTERRUPT', 3, null]) {
      const answer = await send(id, { message: 'x', ifRunning });
      expect({ ifRunning, status: answer.status, body: answer.body }).toEqual({
        ifRunning,
        status: 400,
        body: { success: false, error: { code: 'VALIDATION_ERROR', message: expect.stringContaining('ifRunning') } },
      });
    }
    const form = new FormData();
    form.append('message', 'x');
    form.append('ifRunning', 'later');
    const multipart = await h.api(`/api/v1/tasks/${id}/messages`, { method: 'POST', body: form });
    expect(multipart.status).toBe(400);
    expect(multipart.body.error.code).toBe('VALIDATION_ERROR');
    // Its turn takes its own reply, not one the next test scripts.
    await finished(id);
  });

  it('with no turn running, every value behaves as enqueue: the message starts the next turn', async () => {
    h.model.script({ text: 'one' }, { text: 'two' }, { text: 'three' }, { text: 'four' });
    const { id } = await create({ message: 'first' });
    await finished(id);
    for (const ifRunning of ['reject', 'interrupt', 'rollback']) {
      const answer = await send(id, { message: `then ${ifRunning}`, ifRunning });
      expect(answer.status).toBe(201);
      expect(await finished(id)).toBe('completed');
    }
    const events = await history(id);
    expect(events.filter((e) => e.type === 'done').map((e) => e.data)).toEqual(
      [1, 2, 3, 4].map((turn) => ({ status: 'completed', turn, usage: expect.objectContaining({ totalTokens: expect.any(Number) }) })),
    );
    expect(events.filter((e) => e.type === 'rolled_back')).toEqual([]);
    expect(events.filter((e) => e.type === 'message').map((e) => (e.data as { queued: boolean }).queued)).toEqual([
      true,
      false,
      false,
      false,
    ]);
  });

  it("rollback of another tenant's task is a 404, and changes nothing", async () => {
    h.model.script({ hang: true });
    const { id } = await create({ message: 'mine' });
    await until(id, (s) => s === 'running', 'the turn to run');
    await asked('mine');
    const answer = await send(id, { message: 'theirs', ifRunning: 'rollback' }, OTHER_API_KEY);
    expect(answer.status).toBe(404);
    expect(answer.body.error.code).toBe('NOT_FOUND');
    expect(await status(id)).toBe('running');
    await ats.tasks.cancel(id);
  });

  it('interrupt: kills the running command, ends the turn as interrupted, and starts the new one with the whole context', async () => {
    const mark = marker();
    h.model.script(
      { toolCalls: [{ name: 'shell', arguments: { command: `sleep 1${mark} & sleep 2${mark}` } }] },
      { text: 'Stopped, doing the other thing.' },
    );
    const { id } = await create({ message: 'slow tool' });
    await commandRuns(id, mark, 2, 'both sleeps to run');
    const before = h.model.requests.length;

    const answer = await send(id, { message: 'do the other thing', ifRunning: 'interrupt' });
    expect(answer.status).toBe(201);
    expect(answer.body.data).toEqual({ id, messageId: expect.stringMatching(/^msg_/), status: 'running' });
    await waitFor(() => (sleeping(mark).length === 0 ? true : undefined), 15_000, 'the sandboxed processes to be killed');
    expect(await finished(id)).toBe('completed');

    const events = await history(id);
    const callId = (events.find((e) => e.type === 'tool_call')!.data as { callId: string }).callId;
    const after = events.slice(events.findIndex((e) => e.type === 'tool_started') + 1);
    expect(after.map(({ type, data }) => ({ type, data }))).toEqual([
      {
        type: 'tool_result',
        data: { callId, toolName: 'shell', status: 'cancelled', output: 'The turn was interrupted.', durationMs: 0 },
      },
      {
        type: 'done',
        data: { status: 'cancelled', turn: 1, reason: 'interrupted', usage: expect.objectContaining({ totalTokens: expect.any(Number) }) },
      },
      { type: 'message', data: { messageId: answer.body.data.messageId, text: 'do the other thing', queued: false } },
      { type: 'status', data: { status: 'running', turn: 2, messageId: answer.body.data.messageId } },
      { type: 'usage', data: expect.objectContaining({ turn: 2, step: 1 }) },
      { type: 'content', data: { text: 'Stopped, doing the other thing.' } },
      { type: 'done', data: { status: 'completed', turn: 2, usage: expect.objectContaining({ totalTokens: expect.any(Number) }) } },
    ]);
    // The new turn asked once, with everything: the first message, the call and its cancelled result, the new message.
    expect(h.model.requests).toHaveLength(before + 1);
    const messages = h.model.requests[before].messages!;
    expect(messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool', 'user']);
    expect(messages[1].content).toBe('slow tool');
    expect(messages[3].content).toBe('The turn was interrupted.');
    expect(messages[4].content).toBe('do the other thing');
  });

  it('interrupt: cancels the pending approvals, and the new turn starts at once', async () => {
    const { id, callId } = await waitingForApproval();
    h.model.script({ text: 'Fine, no listing.' });
    const answer = await send(id, { message: 'never mind', ifRunning: 'interrupt' });
    expect(answer.status).toBe(201);
    await finished(id);
    const view = await ats.tasks.get(id);
    expect(view).toMatchObject({ status: 'completed', turn: 2, pendingApprovals: [] });
    const events = await history(id);
    expect(events.find((e) => e.type === 'tool_result')?.data).toMatchObject({ callId, status: 'cancelled' });
    await expect(ats.tasks.approve(id, callId, 'proceed_once')).rejects.toMatchObject({ status: 409, code: 'CONFLICT' });
  });

  it('two interrupts at once: exactly one wins, the other gets 409, and one new turn runs', async () => {
    const { id } = await waitingForApproval();
    h.model.script({ text: 'The winner.' });
    const answers = await atOnce([
      { path: `/api/v1/tasks/${id}/messages`, json: { message: 'first interrupt', ifRunning: 'interrupt' } },
      { path: `/api/v1/tasks/${id}/messages`, json: { message: 'second interrupt', ifRunning: 'interrupt' } },
    ]);
    expect(answers.map((a) => a.status).sort()).toEqual([201, 409]);
    expect(answers.find((a) => a.status === 409)!.body.error.code).toBe('CONFLICT');
    await finished(id);
    const events = await history(id);
    expect(events.filter((e) => e.type === 'status').map((e) => (e.data as { turn: number }).turn)).toEqual([1, 2]);
    expect(events.filter((e) => e.type === 'message')).toHaveLength(2); // the loser recorded nothing
  });

  it('an interrupt racing an approval of the waiting call: exactly one wins, the other gets 409', async () => {
    const { id, callId } = await waitingForApproval();
    h.model.script({ text: 'after the race' });
    const [approval, interrupt] = await atOnce([
      { path: `/api/v1/tasks/${id}/tools/${callId}/approve`, json: { outcome: 'proceed_once' } },
      { path: `/api/v1/tasks/${id}/messages`, json: { message: 'stop it', ifRunning: 'interrupt' } },
    ]);
    expect([approval.status, interrupt.status].filter((s) => s === 409)).toHaveLength(1);
    await finished(id);
    const events = await history(id);
    const decided = events.some((e) => e.type === 'tool_decision');
    const interrupted = events.some((e) => e.type === 'done' && (e.data as { reason?: string }).reason === 'interrupted');
    expect([decided, interrupted]).toEqual([approval.status === 200, interrupt.status === 201]);
  });

  it("rollback: the workspace is the turn start's again, the model's context leaves the turn out, and the history keeps it", async () => {
    const mark = marker();
    h.model.script(
      // Turn 1: a file and an artifact, then an answer.
      {
        toolCalls: [
          { name: 'write_file', arguments: { path: 'keep.txt', content: 'before\n' } },
          { name: 'write_file', arguments: { path: 'downloads/report.txt', content: 'turn 1\n' } },
        ],
      },
      { text: 'Wrote keep.txt.' },
      // Turn 2: an artifact of its own (a recorded step), then changes in a command still running when the rollback comes.
      { toolCalls: [{ name: 'write_file', arguments: { path: 'downloads/turn2.txt', content: 'turn 2\n' } }] },
      {
        toolCalls: [
          {
            name: 'shell',
            arguments: {
              command: `echo changed > keep.txt; echo turn 2 was here > downloads/report.txt; echo x > scratch.txt; sleep 3${mark}`,
            },
          },
        ],
      },
      // Turn 3: looks at the workspace.
      { toolCalls: [{ name: 'shell', arguments: { command: 'cat keep.txt downloads/report.txt; ls . downloads' } }] },
      { text: 'All as before.' },
    );
    const { id } = await create({ message: 'write keep.txt' });
    await finished(id);
    const turn1Requests = h.model.requests.length;
    const turn1Artifacts = await ats.artifacts.list(id);
    expect(turn1Artifacts.map((a) => a.path)).toEqual(['downloads/report.txt']);
    await ats.tasks.sendMessage(id, 'change everything');
    await commandRuns(id, mark, 1, 'the command of turn 2 to run');
    const beforeRollback = await history(id);

    const answer = await send(id, { message: 'no, leave it as it was', ifRunning: 'rollback' });
    expect(answer.status).toBe(201);
    await waitFor(() => (sleeping(mark).length === 0 ? true : undefined), 15_000, 'the command to be killed');
    expect(await finished(id)).toBe('completed');

    const events = await history(id);
    // Every event stays: those before the rollback unchanged, then the interrupted end and the rollback.
    expect(events.slice(0, beforeRollback.length)).toEqual(beforeRollback);
    const turn2Start = beforeRollback.find((e) => e.type === 'status' && (e.data as { turn: number }).turn === 2)!.id;
    const interruptedDone = events.find((e) => e.type === 'done' && (e.data as { reason?: string }).reason === 'interrupted')!;
    const rolledBack = events.find((e) => e.type === 'rolled_back')!;
    expect(rolledBack.data).toEqual({ fromEventId: turn2Start, toEventId: interruptedDone.id });
    expect(rolledBack.id).toBe(interruptedDone.id + 1);

    // The files are turn 2's start's: keep.txt as turn 1 left it, no scratch.txt.
    const results = events.filter((e) => e.type === 'tool_result').map((e) => e.data as { output: string; status: string });
    expect(results.at(-1)).toMatchObject({ status: 'success' });
    expect(results.at(-1)!.output).toContain('before');
    expect(results.at(-1)!.output).toContain('turn 1');
    expect(results.at(-1)!.output).not.toContain('changed');
    expect(results.at(-1)!.output).not.toContain('turn 2 was here');
    expect(results.at(-1)!.output).not.toContain('scratch.txt');
    expect(results.at(-1)!.output).not.toContain('turn2.txt');
    // The artifacts are the turn start's again, and the next call's scan found nothing to change.
    expect(await ats.artifacts.list(id)).toEqual(turn1Artifacts);
    expect(events.slice(rolledBack.id).filter((e) => e.type === 'artifact')).toEqual([]);

    // Turn 3's first request is turn 1's conversation and the new message: nothing of turn 2.
    const turn3At = h.model.requests.findIndex((r, i) => i >= turn1Requests && r.messages?.at(-1)?.content === 'no, leave it as it was');
    const turn3First = h.model.requests[turn3At].messages!;
    const turn1Last = h.model.requests[turn1Requests - 1].messages!;
    expect(turn3First).toEqual([
      ...turn1Last,
      { role: 'assistant', content: 'Wrote keep.txt.' },
      { role: 'user', content: 'no, leave it as it was' },
    ]);
    expect(JSON.stringify(h.model.requests.slice(turn3At).map((r) => r.messages))).not.toContain('change everything');
  });

  it('a rollback of the turn a rollback started brings back what that one brought back, an empty workspace included', async () => {
    h.model.script(
      { text: 'Nothing written.' },
      // Turn 2 records a file, then waits on the model when it is rolled back.
      { toolCalls: [{ name: 'write_file', arguments: { path: 'a.txt', content: 'a' } }] },
      { hang: true },
      // Turn 3 (started by the rollback) waits on the model, and is rolled back in turn.
      { hang: true },
      // Turn 4 looks.
      { toolCalls: [{ name: 'shell', arguments: { command: 'ls -A; echo end' } }] },
      { text: 'Empty.' },
    );
    const { id } = await create({ message: 'nothing yet' });
    await finished(id);
    const before = h.model.requests.length;
    await ats.tasks.sendMessage(id, 'write a.txt');
    await waitFor(() => (h.model.requests.length === before + 2 ? true : undefined), 30_000, 'turn 2 to ask again');
    expect((await send(id, { message: 'undo', ifRunning: 'rollback' })).status).toBe(201);
    await waitFor(() => (h.model.requests.length === before + 3 ? true : undefined), 30_000, 'turn 3 to ask');
    expect((await send(id, { message: 'undo again', ifRunning: 'rollback' })).status).toBe(201);
    expect(await finished(id)).toBe('completed');
    const events = await history(id);
    const rollbacks = events.filter((e) => e.type === 'rolled_back');
    expect(rollbacks).toHaveLength(2);
    // Time travel agrees: right after each rollback the workspace is empty, as it was when turn 2 began.
    const writtenAt = events.find((e) => e.type === 'tool_result')!.id;
    expect((await ats.files.list(id, { at: writtenAt })).files.map((f) => f.path)).toEqual(['a.txt']);
    for (const rolledBack of rollbacks) expect((await ats.files.list(id, { at: rolledBack.id })).files).toEqual([]);
    const listing = events.filter((e) => e.type === 'tool_result').at(-1)!.data as { output: string };
    expect(listing.output).not.toContain('a.txt');
    expect(listing.output).toContain('end');
  });

  it('rollback when the checkpoint of the turn start is no longer kept: 409 saying so, and nothing recorded', async () => {
    const mark = marker();
    h.model.script(
      { toolCalls: [{ name: 'write_file', arguments: { path: 'a.txt', content: 'a' } }] },
      { text: 'Wrote a.txt.' },
      // Turn 2 records two checkpoints of its own (CHECKPOINT_RETENTION=last:2 then keeps only those), then runs on.
      {
        toolCalls: [
          { name: 'write_file', arguments: { path: 'b.txt', content: 'b' } },
          { name: 'write_file', arguments: { path: 'c.txt', content: 'c' } },
        ],
      },
      { toolCalls: [{ name: 'shell', arguments: { command: `sleep 3${mark}` } }] },
    );
    const { id } = await create({ message: 'write a.txt' });
    await finished(id);
    await ats.tasks.sendMessage(id, 'write b.txt');
    await commandRuns(id, mark, 1, 'the command of turn 2 to run');
    const before = await history(id);
    const answer = await send(id, { message: 'undo that', ifRunning: 'rollback' });
    expect(answer.status).toBe(409);
    expect(answer.body.error).toEqual({ code: 'CONFLICT', message: expect.stringMatching(/no longer kept \(CHECKPOINT_RETENTION\)/) });
    expect(await history(id)).toEqual(before);
    expect(await status(id)).toBe('running');
    await ats.tasks.cancel(id);
  });
});

/** The HTTP/1.1 responses one connection answered in turn, each with its status and JSON body. */
function splitResponses(raw: string): { status: number; body: any }[] {
  const answers: { status: number; body: any }[] = [];
  let rest = raw;
  while (rest.startsWith('HTTP/1.1 ')) {
    const headEnd = rest.indexOf('\r\n\r\n');
    const head = rest.slice(0, headEnd);
    const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? 0);
    const body = Buffer.from(rest.slice(headEnd + 4), 'latin1')
      .subarray(0, length)
      .toString('utf8');
    answers.push({ status: Number(head.split(' ')[1]), body: JSON.parse(body) });
    rest = Buffer.from(rest.slice(headEnd + 4), 'latin1')
      .subarray(length)
      .toString('latin1');
  }
  return answers;
}
