import { execFileSync } from 'node:child_process';
import type { AtsClient, TaskStreamEvent } from '@agentic-task-service/client';
import type { Harness } from '../../../test/support/service-harness';
import { startHarness, waitFor } from '../../../test/support/service-harness';

/** Every event of the task's history, until the `done` of its latest turn. */
const history = async (ats: AtsClient, id: string): Promise<TaskStreamEvent[]> => {
  const events: TaskStreamEvent[] = [];
  for await (const event of ats.tasks.stream(id, { after: 0 })) events.push(event);
  return events;
};

/** The data of the events of one type, in order. */
const dataOf = <T extends TaskStreamEvent['type']>(events: TaskStreamEvent[], type: T) =>
  events.flatMap((e) => (e.type === type ? [e.data as Extract<TaskStreamEvent, { type: T }>['data']] : []));

describe('Manual approval of tool calls (autoExecute=false)', () => {
  let h: Harness;
  let ats: AtsClient;
  beforeAll(async () => {
    h = await startHarness();
    ats = h.client();
  });
  afterAll(async () => h.close());

  it('waits for each call of one response, runs the approved one, tells the model about the declined one', async () => {
    h.model.script(
      {
        toolCalls: [
          { name: 'write_file', arguments: { path: 'downloads/ok.md', content: 'yes' } },
          { name: 'write_file', arguments: { path: 'downloads/no.md', content: 'no' } },
        ],
      },
      { text: 'One written, one declined.' },
    );
    const { id } = await ats.tasks.create({ message: 'two files', autoExecute: false });
    const view = await waitFor(async () => {
      const v = await ats.tasks.get(id);
      return v.pendingApprovals.length === 2 ? v : undefined;
    });
    expect(view.status).toBe('awaiting_approval');
    expect(view.pendingApprovals[0]).toEqual({
      callId: expect.any(String),
      toolName: 'write_file',
      args: { path: 'downloads/ok.md', content: 'yes' },
      requestedAt: expect.any(String),
    });
    const [first, second] = view.pendingApprovals.map((p) => p.callId);

    // An outcome outside the enum is input the typed client cannot send: raw HTTP.
    const bad = await h.api(`/api/v1/tasks/${id}/tools/${first}/approve`, { method: 'POST', json: { outcome: 'maybe' } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('VALIDATION_ERROR');
    await expect(ats.tasks.approve(id, 'call_unknown', 'proceed_once')).rejects.toMatchObject({ code: 'NOT_FOUND', status: 404 });

    expect(await ats.tasks.approve(id, first, 'proceed_once')).toEqual({ callId: first, outcome: 'proceed_once', approved: true });
    await expect(ats.tasks.approve(id, first, 'proceed_once')).rejects.toMatchObject({ code: 'CONFLICT', status: 409 });

    expect(await ats.tasks.approve(id, second, 'cancel')).toEqual({ callId: second, outcome: 'cancel', approved: false });

    const events = await history(ats, id);
    expect(dataOf(events, 'tool_call').map((c) => c.status)).toEqual(['awaiting_approval', 'awaiting_approval']);
    // The declined call's result is recorded at once, possibly before the approved one finishes.
    const results = Object.fromEntries(dataOf(events, 'tool_result').map((r) => [r.callId, r.status]));
    expect(results).toEqual({ [first]: 'success', [second]: 'cancelled' });
    expect(events.at(-1)).toMatchObject({ type: 'done', data: { status: 'completed' } });
    const toolMessages = h.model.requests.at(-1)!.messages!.filter((m) => m.role === 'tool');
    expect(toolMessages.find((m) => m.tool_call_id === second)!.content).toMatch(/declined/);
    expect((await ats.artifacts.list(id)).map((f) => f.path)).toEqual(['downloads/ok.md']);
    expect((await ats.tasks.get(id)).pendingApprovals).toEqual([]);
  });

  it('lets exactly one of two concurrent decisions win', async () => {
    h.model.script({ toolCalls: [{ name: 'list_files', arguments: {} }] }, { text: 'listed' });
    const { id } = await ats.tasks.create({ message: 'race', autoExecute: false });
    const callId = await waitFor(async () => (await ats.tasks.get(id)).pendingApprovals[0]?.callId);
    const decisions = await Promise.allSettled([ats.tasks.approve(id, callId, 'proceed_once'), ats.tasks.approve(id, callId, 'cancel')]);
    const outcomes = decisions.map((d) => (d.status === 'fulfilled' ? { status: 200 } : d.reason));
    expect(outcomes.map((o) => o.status).sort()).toEqual([200, 409]);
    expect(outcomes.find((o) => o.status === 409)).toMatchObject({ code: 'CONFLICT' });
    // Let the turn finish so it does not take the next test's scripted replies.
    const events = await history(ats, id);
    expect(dataOf(events, 'tool_decision')).toHaveLength(1);
  });

  it('auto-approves a similar later call after proceed_always and says which rule allowed it', async () => {
    h.model.script(
      { toolCalls: [{ name: 'list_files', arguments: {} }] },
      { toolCalls: [{ name: 'list_files', arguments: { path: '.' } }] },
      { text: 'listed twice' },
    );
    const { id } = await ats.tasks.create({ message: 'always', autoExecute: false });
    const callId = await waitFor(async () => (await ats.tasks.get(id)).pendingApprovals[0]?.callId);
    await ats.tasks.approve(id, callId, 'proceed_always');
    const events = await history(ats, id);
    const calls = dataOf(events, 'tool_call');
    expect(calls.map((c) => c.status)).toEqual(['awaiting_approval', 'approved']);
    expect(calls[1].approvedByRule).toEqual({ toolName: 'list_files' });
    expect(events.at(-1)).toMatchObject({ type: 'done', data: { status: 'completed' } });
  });

  it('after proceed_always on write_file, later writes of any path run without asking (allow all edits)', async () => {
    h.model.script(
      { toolCalls: [{ name: 'write_file', arguments: { path: 'notes/a.md', content: 'a' } }] },
      { toolCalls: [{ name: 'write_file', arguments: { path: 'downloads/b.md', content: 'b' } }] },
      { toolCalls: [{ name: 'edit_file', arguments: { path: 'notes/a.md', oldText: 'a', newText: 'c' } }] },
      { text: 'edited' },
    );
    const { id } = await ats.tasks.create({ message: 'edit files', autoExecute: false });
    const callId = await waitFor(async () => (await ats.tasks.get(id)).pendingApprovals[0]?.callId);
    await ats.tasks.approve(id, callId, 'proceed_always');
    // edit_file is another tool: it still asks.
    const editCall = await waitFor(async () => (await ats.tasks.get(id)).pendingApprovals.find((p) => p.toolName === 'edit_file')?.callId);
    await ats.tasks.approve(id, editCall, 'proceed_once');
    const events = await history(ats, id);
    const calls = dataOf(events, 'tool_call');
    expect(calls.map((c) => [c.toolName, c.status])).toEqual([
      ['write_file', 'awaiting_approval'],
      ['write_file', 'approved'],
      ['edit_file', 'awaiting_approval'],
    ]);
    expect(calls[1].approvedByRule).toEqual({ toolName: 'write_file' });
    expect(events.at(-1)).toMatchObject({ type: 'done', data: { status: 'completed' } });
  });

  it('after proceed_always on a shell line, runs lines of approved programs only, and asks again for anything else', async () => {
    h.model.script(
      { toolCalls: [{ name: 'shell', arguments: { command: 'ls -la' } }] },
      { toolCalls: [{ name: 'shell', arguments: { command: "ls 'a; rm -rf x' || ls" } }] },
      { toolCalls: [{ name: 'shell', arguments: { command: 'ls && rm -rf x' } }] },
      { toolCalls: [{ name: 'shell', arguments: { command: 'ls > listing.txt' } }] },
      { text: 'done listing' },
    );
    const { id } = await ats.tasks.create({ message: 'list', autoExecute: false });
    const decided = new Set<string>();
    const pendingCall = (n: number) =>
      waitFor(
        async () => {
          const p = (await ats.tasks.get(id)).pendingApprovals;
          return p.length === 1 && !decided.has(p[0].callId) ? p[0] : undefined;
        },
        10_000,
        `approval request ${n}`,
      );
    const first = await pendingCall(1);
    decided.add(first.callId);
    expect((await ats.tasks.approve(id, first.callId, 'proceed_always')).approved).toBe(true);
    // The quoted separator is text: only `ls` runs, so no question. Then two lines that must ask.
    const rmLine = await pendingCall(2);
    expect(rmLine.args.command).toBe('ls && rm -rf x');
    decided.add(rmLine.callId);
    await ats.tasks.approve(id, rmLine.callId, 'cancel');
    const redirect = await pendingCall(3);
    expect(redirect.args.command).toBe('ls > listing.txt');
    decided.add(redirect.callId);
    await ats.tasks.approve(id, redirect.callId, 'cancel');

    const events = await history(ats, id);
    const calls = dataOf(events, 'tool_call');
    expect(calls.map((c) => c.status)).toEqual(['awaiting_approval', 'approved', 'awaiting_approval', 'awaiting_approval']);
    expect(calls[1].approvedByRule).toEqual({ toolName: 'shell', programs: ['ls'] });
    const results = dataOf(events, 'tool_result').map((r) => r.status);
    expect(results).toEqual(['success', expect.stringMatching(/success|error/), 'cancelled', 'cancelled']);
    expect(events.at(-1)).toMatchObject({ type: 'done', data: { status: 'completed' } });
  });

  it('cancelling a task kills its running command, closes the call and ends the turn', async () => {
    const marker = `${Date.now() % 100000}.${process.pid}`;
    // One reply only: the turn is cancelled before the model would be asked again.
    h.model.script({ toolCalls: [{ name: 'shell', arguments: { command: `sleep 1${marker} & sleep 2${marker}` } }] });
    const { id } = await ats.tasks.create({ message: 'slow tool' });
    const running = () =>
      execFileSync('ps', ['-eo', 'args'])
        .toString()
        .split('\n')
        .filter((l) => l.includes(marker) && l.startsWith('sleep'));
    await waitFor(() => (running().length === 2 ? true : undefined), 10_000, 'both sleeps to run');
    expect(await ats.tasks.cancel(id)).toEqual({ id, status: 'cancelled' });
    await waitFor(() => (running().length === 0 ? true : undefined), 5_000, 'the sandboxed processes to be killed');
    const events = await history(ats, id);
    expect(dataOf(events, 'tool_result')[0]).toMatchObject({ status: 'cancelled' });
    expect(events.at(-1)).toMatchObject({ type: 'done', data: { status: 'cancelled' } });
    const after = h.model.requests.length;
    await new Promise((r) => setTimeout(r, 300));
    expect(h.model.requests.length).toBe(after); // the model is not asked again for a cancelled turn
  });

  it('accepts multipart create with autoExecute as text', async () => {
    h.model.script({ toolCalls: [{ name: 'list_files', arguments: {} }] }, { text: 'x' });
    // A multipart create without files is one the client never sends (it sends JSON then): raw HTTP.
    const form = new FormData();
    form.append('message', 'multipart approval');
    form.append('autoExecute', 'false');
    const res = await fetch(`${h.url}/api/v1/tasks`, {
      method: 'POST',
      body: form,
      headers: { authorization: 'Bearer test-key-tenant-a' },
    });
    const id = ((await res.json()) as any).data.id;
    const view = await waitFor(async () => {
      const task = await ats.tasks.get(id);
      return task.status === 'awaiting_approval' ? task : undefined;
    });
    expect(view.autoExecute).toBe(false);
    await ats.tasks.cancel(id);
    expect((await ats.tasks.get(id)).status).toBe('cancelled');
    expect((await ats.tasks.get(id)).pendingApprovals).toEqual([]);
  });
});

describe('Approval timeout (APPROVAL_TIMEOUT_MS)', () => {
  let h: Harness;
  beforeAll(async () => (h = await startHarness({ APPROVAL_TIMEOUT_MS: '400' })));
  afterAll(async () => h.close());

  it('treats an undecided call as declined once the timeout passes, says it expired, and the turn goes on', async () => {
    h.model.script(
      { toolCalls: [{ name: 'write_file', arguments: { path: 'downloads/x.md', content: 'x' } }] },
      { text: 'nobody answered' },
    );
    const ats = h.client();
    const { id } = await ats.tasks.create({ message: 'wait for me', autoExecute: false });
    const events = await history(ats, id);
    const callId = dataOf(events, 'tool_call')[0].callId;
    expect(dataOf(events, 'tool_decision')[0]).toEqual({
      callId,
      outcome: 'expired',
      approved: false,
      timeoutMs: 400,
    });
    expect(dataOf(events, 'tool_result')[0]).toMatchObject({
      callId,
      status: 'cancelled',
      output: expect.stringContaining('APPROVAL_TIMEOUT_MS'),
    });
    expect(events.at(-1)).toMatchObject({ type: 'done', data: { status: 'completed' } });
    expect((await ats.tasks.get(id)).pendingApprovals).toEqual([]);
    await expect(ats.tasks.approve(id, callId, 'proceed_once')).rejects.toMatchObject({ code: 'CONFLICT', status: 409 });
    expect(await ats.artifacts.list(id)).toEqual([]);
    const told = h.model.requests.at(-1)!.messages!.find((m) => m.role === 'tool' && m.tool_call_id === callId)!;
    expect(told.content).toMatch(/treated as declined/);
  });
});
