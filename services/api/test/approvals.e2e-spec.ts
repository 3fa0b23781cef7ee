import { Harness, startHarness, waitFor } from '../../../test/support/service-harness';
import { followStream } from '../../../test/support/sse-client';

describe('Manual approval of tool calls (autoExecute=false)', () => {
  let h: Harness;
  beforeAll(async () => (h = await startHarness()));
  afterAll(async () => h.close());

  const task = async (id: string) => (await h.api(`/api/v1/tasks/${id}`)).body.data;
  const approve = (id: string, callId: string, outcome: unknown) => h.api(`/api/v1/tasks/${id}/tools/${callId}/approve`, { method: 'POST', json: { outcome } });

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
    expect(view.pendingApprovals[0]).toEqual({ callId: expect.any(String), toolName: 'write_file', args: { path: 'downloads/ok.md', content: 'yes' }, requestedAt: expect.any(String) });
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
    const results = Object.fromEntries(events.filter((e) => e.kind === 'tool_result').map((e) => [e.payload.data.callId, e.payload.data.status]));
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

  it('accepts multipart create with autoExecute as text', async () => {
    h.model.script({ toolCalls: [{ name: 'list_files', arguments: {} }] }, { text: 'x' });
    const form = new FormData();
    form.append('message', 'multipart approval');
    form.append('autoExecute', 'false');
    const res = await fetch(`${h.url}/api/v1/tasks`, { method: 'POST', body: form, headers: { authorization: 'Bearer test-key-tenant-a' } });
    const id = ((await res.json()) as any).data.id;
    const view = await waitFor(async () => ((await task(id)).status === 'awaiting_approval' ? task(id) : undefined));
    expect(view.autoExecute).toBe(false);
    await h.api(`/api/v1/tasks/${id}/cancel`, { method: 'POST' });
    expect((await task(id)).status).toBe('cancelled');
    expect((await task(id)).pendingApprovals).toEqual([]);
  });
});
