import { execFileSync } from 'node:child_process';
import { Harness, startHarness, waitFor } from '../../../test/support/service-harness';
import { followStream } from '../../../test/support/sse-client';

describe('Manual approval of tool calls (autoExecute=false)', () => {
  let h: Harness;
  beforeAll(async () => (h = await startHarness()));
  afterAll(async () => h.close());

  const task = async (id: string) => (await h.api(`/api/v1/tasks/${id}`)).body.data;
  const approve = (id: string, callId: string, outcome: unknown) =>
    h.api(`/api/v1/tasks/${id}/tools/${callId}/approve`, { method: 'POST', json: { outcome } });

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
    const id = (await h.api('/api/v1/tasks', { method: 'POST', json: { message: 'two files', autoExecute: false } })).body.data.id;
    const view = await waitFor(async () => {
      const v = await task(id);
      return v.pendingApprovals.length === 2 ? v : undefined;
    });
    expect(view.status).toBe('awaiting_approval');
    expect(view.pendingApprovals[0]).toEqual({
      callId: expect.any(String),
      toolName: 'write_file',
      args: { path: 'downloads/ok.md', content: 'yes' },
      requestedAt: expect.any(String),
    });
    const [first, second] = view.pendingApprovals.map((p: { callId: string }) => p.callId);

    const bad = await approve(id, first, 'maybe');
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('VALIDATION_ERROR');
    const unknown = await approve(id, 'call_unknown', 'proceed_once');
    expect(unknown.status).toBe(404);

    const ok = await approve(id, first, 'proceed_once');
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({ success: true, data: { callId: first, outcome: 'proceed_once', approved: true } });
    const again = await approve(id, first, 'proceed_once');
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe('CONFLICT');

    const declined = await approve(id, second, 'cancel');
    expect(declined.body).toEqual({ success: true, data: { callId: second, outcome: 'cancel', approved: false } });

    const events = await followStream(`${h.url}/api/v1/tasks/${id}/stream?after=0`, 'test-key-tenant-a');
    const calls = events.filter((e) => e.kind === 'tool_call').map((e) => e.payload.data.status);
    expect(calls).toEqual(['awaiting_approval', 'awaiting_approval']);
    // The declined call's result is recorded at once, possibly before the approved one finishes.
    const results = Object.fromEntries(
      events.filter((e) => e.kind === 'tool_result').map((e) => [e.payload.data.callId, e.payload.data.status]),
    );
    expect(results).toEqual({ [first]: 'success', [second]: 'cancelled' });
    expect(events.at(-1)!.payload.data.status).toBe('completed');
    const toolMessages = h.model.requests.at(-1)!.messages!.filter((m) => m.role === 'tool');
    expect(toolMessages.find((m) => m.tool_call_id === second)!.content).toMatch(/declined/);
    const files = (await h.api(`/api/v1/tasks/${id}/artifacts`)).body.files.map((f: { path: string }) => f.path);
    expect(files).toEqual(['downloads/ok.md']);
    expect((await task(id)).pendingApprovals).toEqual([]);
  });

  it('lets exactly one of two concurrent decisions win', async () => {
    h.model.script({ toolCalls: [{ name: 'list_files', arguments: {} }] }, { text: 'listed' });
    const id = (await h.api('/api/v1/tasks', { method: 'POST', json: { message: 'race', autoExecute: false } })).body.data.id;
    const callId = (await waitFor(async () => (await task(id)).pendingApprovals[0]?.callId)) as string;
    const results = await Promise.all([approve(id, callId, 'proceed_once'), approve(id, callId, 'cancel')]);
    expect(results.map((r) => r.status).sort()).toEqual([200, 409]);
    // Let the turn finish so it does not take the next test's scripted replies.
    const events = await followStream(`${h.url}/api/v1/tasks/${id}/stream?after=0`, 'test-key-tenant-a');
    expect(events.filter((e) => e.kind === 'tool_decision')).toHaveLength(1);
  });

  it('auto-approves a similar later call after proceed_always and says which rule allowed it', async () => {
    h.model.script(
      { toolCalls: [{ name: 'list_files', arguments: {} }] },
      { toolCalls: [{ name: 'list_files', arguments: { path: '.' } }] },
      { text: 'listed twice' },
    );
    const id = (await h.api('/api/v1/tasks', { method: 'POST', json: { message: 'always', autoExecute: false } })).body.data.id;
    const callId = (await waitFor(async () => (await task(id)).pendingApprovals[0]?.callId)) as string;
    await approve(id, callId, 'proceed_always');
    const events = await followStream(`${h.url}/api/v1/tasks/${id}/stream?after=0`, 'test-key-tenant-a');
    const calls = events.filter((e) => e.kind === 'tool_call').map((e) => e.payload.data);
    expect(calls.map((c) => c.status)).toEqual(['awaiting_approval', 'approved']);
    expect(calls[1].approvedByRule).toEqual({ toolName: 'list_files' });
    expect(events.at(-1)!.payload.data.status).toBe('completed');
  });

  it('after proceed_always on write_file, later writes of any path run without asking (allow all edits)', async () => {
    h.model.script(
      { toolCalls: [{ name: 'write_file', arguments: { path: 'notes/a.md', content: 'a' } }] },
      { toolCalls: [{ name: 'write_file', arguments: { path: 'downloads/b.md', content: 'b' } }] },
      { toolCalls: [{ name: 'edit_file', arguments: { path: 'notes/a.md', oldText: 'a', newText: 'c' } }] },
      { text: 'edited' },
    );
    const id = (await h.api('/api/v1/tasks', { method: 'POST', json: { message: 'edit files', autoExecute: false } })).body.data.id;
    const callId = (await waitFor(async () => (await task(id)).pendingApprovals[0]?.callId)) as string;
    await approve(id, callId, 'proceed_always');
    // edit_file is another tool: it still asks.
    const editCall = (await waitFor(
      async () => (await task(id)).pendingApprovals.find((p: { toolName: string }) => p.toolName === 'edit_file')?.callId,
    )) as string;
    await approve(id, editCall, 'proceed_once');
    const events = await followStream(`${h.url}/api/v1/tasks/${id}/stream?after=0`, 'test-key-tenant-a');
    const calls = events.filter((e) => e.kind === 'tool_call').map((e) => e.payload.data);
    expect(calls.map((c) => [c.toolName, c.status])).toEqual([
      ['write_file', 'awaiting_approval'],
      ['write_file', 'approved'],
      ['edit_file', 'awaiting_approval'],
    ]);
    expect(calls[1].approvedByRule).toEqual({ toolName: 'write_file' });
    expect(events.at(-1)!.payload.data.status).toBe('completed');
  });

  it('after proceed_always on a shell line, runs lines of approved programs only, and asks again for anything else', async () => {
    h.model.script(
      { toolCalls: [{ name: 'shell', arguments: { command: 'ls -la' } }] },
      { toolCalls: [{ name: 'shell', arguments: { command: "ls 'a; rm -rf x' || ls" } }] },
      { toolCalls: [{ name: 'shell', arguments: { command: 'ls && rm -rf x' } }] },
      { toolCalls: [{ name: 'shell', arguments: { command: 'ls > listing.txt' } }] },
      { text: 'done listing' },
    );
    const id = (await h.api('/api/v1/tasks', { method: 'POST', json: { message: 'list', autoExecute: false } })).body.data.id;
    const pendingCall = async (n: number) =>
      (await waitFor(
        async () => {
          const p = (await task(id)).pendingApprovals;
          return p.length === 1 && !decided.has(p[0].callId) ? p[0] : undefined;
        },
        10_000,
        `approval request ${n}`,
      )) as { callId: string; args: { command: string } };
    const decided = new Set<string>();
    const first = await pendingCall(1);
    decided.add(first.callId);
    expect((await approve(id, first.callId, 'proceed_always')).body.data.approved).toBe(true);
    // The quoted separator is text: only `ls` runs, so no question. Then two lines that must ask.
    const rmLine = await pendingCall(2);
    expect(rmLine.args.command).toBe('ls && rm -rf x');
    decided.add(rmLine.callId);
    await approve(id, rmLine.callId, 'cancel');
    const redirect = await pendingCall(3);
    expect(redirect.args.command).toBe('ls > listing.txt');
    decided.add(redirect.callId);
    await approve(id, redirect.callId, 'cancel');

    const events = await followStream(`${h.url}/api/v1/tasks/${id}/stream?after=0`, 'test-key-tenant-a');
    const calls = events.filter((e) => e.kind === 'tool_call').map((e) => e.payload.data);
    expect(calls.map((c) => c.status)).toEqual(['awaiting_approval', 'approved', 'awaiting_approval', 'awaiting_approval']);
    expect(calls[1].approvedByRule).toEqual({ toolName: 'shell', programs: ['ls'] });
    const results = events.filter((e) => e.kind === 'tool_result').map((e) => e.payload.data.status);
    expect(results).toEqual(['success', expect.stringMatching(/success|error/), 'cancelled', 'cancelled']);
    expect(events.at(-1)!.payload.data.status).toBe('completed');
  });

  it('cancelling a task kills its running command, closes the call and ends the turn', async () => {
    const marker = `${Date.now() % 100000}.${process.pid}`;
    // One reply only: the turn is cancelled before the model would be asked again.
    h.model.script({ toolCalls: [{ name: 'shell', arguments: { command: `sleep 1${marker} & sleep 2${marker}` } }] });
    const id = (await h.api('/api/v1/tasks', { method: 'POST', json: { message: 'slow tool' } })).body.data.id;
    const running = () =>
      execFileSync('ps', ['-eo', 'args'])
        .toString()
        .split('\n')
        .filter((l) => l.includes(marker) && l.startsWith('sleep'));
    await waitFor(() => (running().length === 2 ? true : undefined), 10_000, 'both sleeps to run');
    const cancelled = await h.api(`/api/v1/tasks/${id}/cancel`, { method: 'POST' });
    expect(cancelled.body.data.status).toBe('cancelled');
    await waitFor(() => (running().length === 0 ? true : undefined), 5_000, 'the sandboxed processes to be killed');
    const events = await followStream(`${h.url}/api/v1/tasks/${id}/stream?after=0`, 'test-key-tenant-a');
    expect(events.find((e) => e.kind === 'tool_result')!.payload.data).toMatchObject({ status: 'cancelled' });
    expect(events.at(-1)!.payload.data).toMatchObject({ status: 'cancelled' });
    const after = h.model.requests.length;
    await new Promise((r) => setTimeout(r, 300));
    expect(h.model.requests.length).toBe(after); // the model is not asked again for a cancelled turn
  });

  it('accepts multipart create with autoExecute as text', async () => {
    h.model.script({ toolCalls: [{ name: 'list_files', arguments: {} }] }, { text: 'x' });
    const form = new FormData();
    form.append('message', 'multipart approval');
    form.append('autoExecute', 'false');
    const res = await fetch(`${h.url}/api/v1/tasks`, {
      method: 'POST',
      body: form,
      headers: { authorization: 'Bearer test-key-tenant-a' },
    });
    const id = ((await res.json()) as any).data.id;
    const view = await waitFor(async () => ((await task(id)).status === 'awaiting_approval' ? task(id) : undefined));
    expect(view.autoExecute).toBe(false);
    await h.api(`/api/v1/tasks/${id}/cancel`, { method: 'POST' });
    expect((await task(id)).status).toBe('cancelled');
    expect((await task(id)).pendingApprovals).toEqual([]);
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
    const id = (await h.api('/api/v1/tasks', { method: 'POST', json: { message: 'wait for me', autoExecute: false } })).body.data.id;
    const events = await followStream(`${h.url}/api/v1/tasks/${id}/stream?after=0`, 'test-key-tenant-a', { timeoutMs: 10_000 });
    const callId = events.find((e) => e.kind === 'tool_call')!.payload.data.callId;
    expect(events.find((e) => e.kind === 'tool_decision')!.payload.data).toEqual({
      callId,
      outcome: 'expired',
      approved: false,
      timeoutMs: 400,
    });
    expect(events.find((e) => e.kind === 'tool_result')!.payload.data).toMatchObject({
      callId,
      status: 'cancelled',
      output: expect.stringContaining('APPROVAL_TIMEOUT_MS'),
    });
    expect(events.at(-1)!.payload.data.status).toBe('completed');
    const view = (await h.api(`/api/v1/tasks/${id}`)).body.data;
    expect(view.pendingApprovals).toEqual([]);
    const late = await h.api(`/api/v1/tasks/${id}/tools/${callId}/approve`, { method: 'POST', json: { outcome: 'proceed_once' } });
    expect(late.status).toBe(409);
    expect((await h.api(`/api/v1/tasks/${id}/artifacts`)).body.files).toEqual([]);
    const told = h.model.requests.at(-1)!.messages!.find((m) => m.role === 'tool' && m.tool_call_id === callId)!;
    expect(told.content).toMatch(/treated as declined/);
  });
});
