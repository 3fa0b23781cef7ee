import { randomBytes } from 'node:crypto';
import { TaskCommandExecutor } from '@app/task-commands';
import type { WebhookReceiver } from '@app/webhooks/testing/webhook-receiver';
import { startWebhookReceiver } from '@app/webhooks/testing/webhook-receiver';
import { Scrape } from '../../../test/support/prometheus-scrape';
import type { Harness } from '../../../test/support/service-harness';
import { API_KEY, startHarness, waitFor } from '../../../test/support/service-harness';

/** A bucket's upper bound (`le`) as a number. */
const bound = (le: string): number => (le === '+Inf' ? Infinity : Number(le));

/** Long enough to tell a measured wait from a zero one. */
const APPROVAL_DELAY_MS = 300;

describe('GET /metrics after a task with a tool call and an approval (all-in-one: one registry for every service)', () => {
  let h: Harness;
  let receiver: WebhookReceiver;
  let taskId: string;
  let callId: string;
  let scrape: Scrape;
  let text: string;

  beforeAll(async () => {
    receiver = await startWebhookReceiver((_request, res) => res.writeHead(204).end());
    h = await startHarness({
      WEBHOOK_SECRET: `whsec_${randomBytes(32).toString('base64')}`,
      WEBHOOK_ALLOW_HOSTS: `127.0.0.1:${receiver.port}`,
      MODEL_PRICES: JSON.stringify({ 'scripted-model': { input: 1, output: 2 } }),
    });
    h.model.script({ toolCalls: [{ name: 'write_file', arguments: { path: 'downloads/a.md', content: 'hi' } }] }, { text: 'Written.' });
    const created = await h.api('/api/v1/tasks', {
      method: 'POST',
      json: { message: 'write a file', autoExecute: false, webhookUrl: `${receiver.origin}/hooks` },
    });
    expect(created.status).toBe(201);
    taskId = created.body.data.id;
    callId = await waitFor(async () => (await h.api(`/api/v1/tasks/${taskId}`)).body.data.pendingApprovals[0]?.callId as string);
    await new Promise((r) => setTimeout(r, APPROVAL_DELAY_MS));
    const approved = await h.api(`/api/v1/tasks/${taskId}/tools/${callId}/approve`, { method: 'POST', json: { outcome: 'proceed_once' } });
    expect(approved.status).toBe(200);
    await waitFor(async () => (await h.api(`/api/v1/tasks/${taskId}`)).body.data.status === 'completed', 15_000, 'the task to complete');
    // The approval request and the completion: two deliveries.
    await waitFor(() => receiver.received.length >= 2, 15_000, 'two webhook deliveries');
    await h.api('/api/v1/tasks/no-such-task');
    const res = await fetch(`${h.url}/metrics`);
    text = await res.clone().text();
    scrape = await Scrape.of(`${h.url}/metrics`);
  });
  afterAll(async () => {
    await h.close();
    await receiver.close();
  });

  it('answers without an API key in the Prometheus text format', async () => {
    const res = await fetch(`${h.url}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  });

  it('times HTTP requests by route template and status, never by path', () => {
    const created = scrape.histograms('ats_http_request_duration_seconds', { method: 'POST', route: '/api/v1/tasks', status: '201' });
    expect(created).toHaveLength(1);
    expect(created[0].count).toBe(1);
    expect(created[0].sum).toBeGreaterThan(0);
    const approve = scrape.histograms('ats_http_request_duration_seconds', {
      route: '/api/v1/tasks/:id/tools/:callId/approve',
      status: '200',
    });
    expect(approve[0]?.count).toBe(1);
    expect(scrape.histograms('ats_http_request_duration_seconds', { route: '/api/v1/tasks/:id', status: '404' })[0]?.count).toBe(1);
    // Buckets are cumulative and end at the count.
    const buckets = Object.entries(created[0].buckets)
      .sort(([a], [b]) => bound(a) - bound(b))
      .map(([, count]) => count);
    expect(buckets).toEqual([...buckets].sort((a, b) => a - b));
    expect(created[0].buckets['+Inf']).toBe(created[0].count);
  });

  it('counts tasks by status from the read model, every status present', () => {
    expect(scrape.value('ats_tasks', 'gauge', { status: 'completed' })).toBe(1);
    expect(
      scrape
        .samples('ats_tasks', 'gauge')
        .map((s) => s.labels.status)
        .sort(),
    ).toEqual(['awaiting_approval', 'cancelled', 'completed', 'failed', 'pending', 'running'].sort());
  });

  it('counts the turn started and finished', () => {
    expect(scrape.value('ats_turns_started_total', 'counter')).toBe(1);
    expect(scrape.value('ats_turns_finished_total', 'counter', { outcome: 'completed' })).toBe(1);
  });

  it('times model calls and counts their tokens by model', () => {
    const calls = scrape.histograms('ats_model_call_duration_seconds', { model: 'scripted-model', outcome: 'ok' });
    expect(calls[0]?.count).toBe(2);
    expect(calls[0].sum).toBeGreaterThan(0);
    expect(scrape.value('ats_model_tokens_total', 'counter', { model: 'scripted-model', direction: 'in' })).toBeGreaterThan(0);
    expect(scrape.value('ats_model_tokens_total', 'counter', { model: 'scripted-model', direction: 'out' })).toBeGreaterThan(0);
  });

  it("sums the priced calls' cost by tenant: the task's usage.costUsd", async () => {
    const { costUsd } = (await h.api(`/api/v1/tasks/${taskId}`)).body.data.usage;
    expect(costUsd).toBeGreaterThan(0);
    const costs = scrape.samples('ats_model_cost_usd_total', 'counter');
    expect(costs.map((c) => c.labels.tenant)).toEqual([expect.stringMatching(/^key-/)]);
    expect(costs[0].value).toBeCloseTo(costUsd, 9);
  });

  it('times the tool run by tool and status', () => {
    const runs = scrape.histograms('ats_tool_run_duration_seconds', { tool: 'write_file', status: 'success' });
    expect(runs[0]?.count).toBe(1);
    expect(runs[0].sum).toBeGreaterThan(0);
  });

  it('measures the approval wait from request to decision, by outcome', () => {
    const waits = scrape.histograms('ats_approval_wait_seconds', { outcome: 'proceed_once' });
    expect(waits[0]?.count).toBe(1);
    expect(waits[0].sum).toBeGreaterThanOrEqual(APPROVAL_DELAY_MS / 1000 - 0.05);
    expect(waits[0].sum).toBeLessThan(10);
  });

  it('times event store appends; one after another, they never conflict', () => {
    const appends = scrape.histograms('ats_event_store_append_duration_seconds', { outcome: 'ok' });
    // At least: created, turn started, model response, approval asked, decided, tool started and finished, completed.
    expect(appends[0]?.count).toBeGreaterThanOrEqual(8);
    // One process, one command executor that knows each stream's tail, commands one at a time.
    expect(scrape.value('ats_event_store_conflicts_total', 'counter')).toBe(0);
    expect(scrape.histograms('ats_event_store_append_duration_seconds', { outcome: 'conflict' })).toEqual([]);
  });

  it('counts a conflict for each append that loses a race: two commands on one task at once, one conflict', async () => {
    // Both commands decide on the revision they read and append at it: the second append conflicts,
    // is retried on the fresh stream (TaskCommandExecutor) and lands. With the stream loaded into the
    // executor's cache and both started in one tick, both read that same revision, every time; two
    // HTTP requests cannot be made to overlap like that.
    const executor = h.app.get(TaskCommandExecutor);
    await executor.load(taskId);
    const report = (server: string) => executor.execute(taskId, { type: 'ReportMcpServerUnavailable', data: { server, reason: 'probe' } });
    const outcomes = await Promise.all([report('first'), report('second')]);
    expect(outcomes.map((o) => o.events.map((e) => e.type))).toEqual([['McpServerUnavailable'], ['McpServerUnavailable']]);
    const after = await Scrape.of(`${h.url}/metrics`);
    expect(after.value('ats_event_store_conflicts_total', 'counter')).toBe(1);
    expect(after.histograms('ats_event_store_append_duration_seconds', { outcome: 'conflict' })[0]?.count).toBe(1);
  });

  it('times bus requests by subject', () => {
    const executes = scrape.histograms('ats_bus_request_duration_seconds', { subject: 'sandbox.command.execute_tool', outcome: 'ok' });
    expect(executes[0]?.count).toBe(1);
  });

  it('counts webhook deliveries by outcome', () => {
    expect(scrape.value('ats_webhook_deliveries_total', 'counter', { outcome: 'delivered' })).toBe(2);
  });

  it('reports live sandboxes', () => {
    expect(scrape.value('ats_sandboxes_live', 'gauge')).toBe(1);
  });

  it('counts open SSE connections while a stream is open, and not after', async () => {
    expect(scrape.value('ats_sse_connections', 'gauge')).toBe(0);
    // A turn waiting for approval: its stream stays open until the client leaves.
    h.model.script({ toolCalls: [{ name: 'list_files', arguments: {} }] });
    const waiting = (await h.api('/api/v1/tasks', { method: 'POST', json: { message: 'wait', autoExecute: false } })).body.data.id;
    await waitFor(async () => (await h.api(`/api/v1/tasks/${waiting}`)).body.data.status === 'awaiting_approval');
    const controller = new AbortController();
    const stream = await fetch(`${h.url}/api/v1/tasks/${waiting}/stream`, {
      headers: { authorization: `Bearer ${API_KEY}` },
      signal: controller.signal,
    });
    expect(stream.status).toBe(200);
    const sse = async () => (await Scrape.of(`${h.url}/metrics`)).value('ats_sse_connections', 'gauge');
    expect(await sse()).toBe(1);
    controller.abort();
    await waitFor(async () => (await sse()) === 0, 5_000, 'the gauge back at 0');
  });

  it('never puts a task id, a call id or an API key in a label', () => {
    expect(text).not.toContain(taskId);
    expect(text).not.toContain(callId);
    expect(text).not.toContain(API_KEY);
  });

  it('answers /readyz 200 naming the dependencies of the all-in-one process', async () => {
    const res = await h.api('/readyz', { key: null });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ready', dependencies: { eventStore: 'up', objectStore: 'up' } });
  });
});
