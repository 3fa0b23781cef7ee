import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { Webhook } from 'standardwebhooks';
import type { ReceivedRequest, WebhookReceiver } from '@app/webhooks/testing/webhook-receiver';
import { startWebhookReceiver } from '@app/webhooks/testing/webhook-receiver';
import { OpenApiResponseValidator } from '../../../test/support/openapi-response-validator';
import type { Harness } from '../../../test/support/service-harness';
import { API_KEY, startHarness, waitFor } from '../../../test/support/service-harness';
import { followStream } from '../../../test/support/sse-client';

// The e2e-distributed project's setup allows 180 s (seven processes start per harness): only the all-in-one default is raised here.
if (process.env.ATS_E2E_MODE !== 'distributed') jest.setTimeout(60_000);

const SECRET = `whsec_${randomBytes(32).toString('base64')}`;
/** In the operator's WEBHOOK_URL, the way Slack-style URLs carry theirs: it must never reach a tenant. */
const OPERATOR_TOKEN = 'opTok9d8c7b6a5f4e3d2c1b0a';

describe('Webhooks: signed, retried, recorded deliveries (docs/api.md "Webhooks")', () => {
  let h: Harness;
  let answer: (request: ReceivedRequest, res: ServerResponse) => void;
  let receiver: WebhookReceiver;
  let silent: WebhookReceiver;

  beforeAll(async () => {
    receiver = await startWebhookReceiver((request, res) => answer(request, res));
    // Never answers: every attempt times out.
    silent = await startWebhookReceiver(() => undefined);
    h = await startHarness({
      WEBHOOK_SECRET: SECRET,
      WEBHOOK_ALLOW_HOSTS: `127.0.0.1:${receiver.port},127.0.0.1:${silent.port}`,
      WEBHOOK_RETRY_BASE_MS: '50',
      WEBHOOK_MAX_ATTEMPTS: '3',
      WEBHOOK_TIMEOUT_MS: '300',
      WEBHOOK_URL: `${receiver.origin}/default/services/T0001/${OPERATOR_TOKEN}?token=${OPERATOR_TOKEN}`,
    });
  });
  afterAll(async () => {
    await h.close();
    await receiver.close();
    await silent.close();
  });
  beforeEach(() => {
    answer = (_request, res) => res.writeHead(204).end();
  });

  const create = (json: Record<string, unknown>) => h.api('/api/v1/tasks', { method: 'POST', json });
  const deliveries = async (id: string) => (await h.api(`/api/v1/tasks/${id}/webhook-deliveries`)).body.data.deliveries;
  const verified = (r: ReceivedRequest) => new Webhook(SECRET).verify(r.body, r.headers as Record<string, string>) as any;
  const finished = (id: string) => followStream(`${h.url}/api/v1/tasks/${id}/stream?after=0`, 'test-key-tenant-a');

  const redeliver = (id: string, deliveryId: string, key?: string) =>
    h.api(`/api/v1/tasks/${id}/webhook-deliveries/${deliveryId}/redeliver`, { method: 'POST', ...(key ? { key } : {}) });
  const settled = (id: string, status: string, what: string) =>
    waitFor(
      async () => {
        const d = await deliveries(id);
        return d[0]?.status === status ? d[0] : undefined;
      },
      15_000,
      what,
    );

  it('sends an approval request and the completion once each, signed so that standardwebhooks verifies them', async () => {
    h.model.script({ toolCalls: [{ name: 'list_files', arguments: {} }] }, { text: 'listed' });
    const url = `${receiver.origin}/hooks/approval`;
    const created = await create({ message: 'ask first', autoExecute: false, webhookUrl: url });
    expect(created.status).toBe(201);
    const id = created.body.data.id;
    const task = (await h.api(`/api/v1/tasks/${id}`)).body.data;
    expect(task.webhookUrl).toBe(url);
    expect(JSON.stringify(task)).not.toContain(SECRET.slice(6));

    const asked = await waitFor(() => receiver.received.find((r) => r.url === '/hooks/approval'), 10_000, 'the approval webhook');
    const message = verified(asked);
    expect(message).toEqual({
      type: 'task.awaiting_approval',
      timestamp: expect.any(String),
      data: {
        taskId: id,
        status: 'awaiting_approval',
        turn: 1,
        pendingApprovals: [{ callId: expect.any(String), toolName: 'list_files', args: {}, requestedAt: expect.any(String) }],
      },
    });
    expect(asked.headers['content-type']).toBe('application/json');
    const { callId } = message.data.pendingApprovals[0];
    expect((await h.api(`/api/v1/tasks/${id}/tools/${callId}/approve`, { method: 'POST', json: { outcome: 'proceed_once' } })).status).toBe(
      200,
    );
    await finished(id);
    await waitFor(() => receiver.received.filter((r) => r.url === '/hooks/approval').length === 2 || undefined, 10_000, 'the completion');
    const [first, second] = receiver.received.filter((r) => r.url === '/hooks/approval');
    expect(verified(second)).toEqual({
      type: 'task.completed',
      timestamp: expect.any(String),
      data: { taskId: id, status: 'completed', turn: 1 },
    });
    expect(first.headers['webhook-id']).not.toBe(second.headers['webhook-id']);

    const shown = await waitFor(async () => {
      const d = await deliveries(id);
      return d.length === 2 && d.every((x: { status: string }) => x.status === 'delivered') ? d : undefined;
    });
    expect(shown.map((d: { id: string; type: string }) => [d.id, d.type])).toEqual([
      [first.headers['webhook-id'], 'task.awaiting_approval'],
      [second.headers['webhook-id'], 'task.completed'],
    ]);
    expect(shown[1].attempts).toEqual([{ at: expect.any(String), statusCode: 204, durationMs: expect.any(Number) }]);
    // Nothing more arrives later (no duplicate from the dispatcher's own appends).
    await new Promise((r) => setTimeout(r, 300));
    expect(receiver.received.filter((r) => r.url === '/hooks/approval')).toHaveLength(2);
    // The delivery records are not task events: the public stream's ids stay its revisions, with no gap.
    const events = await finished(id);
    expect(events.map((e) => e.id)).toEqual(events.map((_, i) => i + 1));
    expect(events.at(-1)!.kind).toBe('done');
    expect((await h.api(`/api/v1/tasks/${id}`)).body.data.lastEventId).toBe(events.length);
  });

  it('retries a receiver that answers 500 twice with the same webhook-id, and shows the three attempts', async () => {
    let calls = 0;
    answer = (_request, res) => res.writeHead(++calls <= 2 ? 500 : 200).end();
    h.model.script({ text: 'done' });
    const created = await create({ message: 'flaky receiver', webhookUrl: `${receiver.origin}/hooks/flaky` });
    const id = created.body.data.id;
    await finished(id);
    const got = await waitFor(() => {
      const r = receiver.received.filter((x) => x.url === '/hooks/flaky');
      return r.length >= 3 ? r : undefined;
    });
    expect(new Set(got.map((r) => r.headers['webhook-id'])).size).toBe(1);
    got.forEach((r) => expect(verified(r).type).toBe('task.completed'));
    const [delivery] = await waitFor(async () => {
      const d = await deliveries(id);
      return d[0]?.status === 'delivered' ? d : undefined;
    });
    expect(delivery).toEqual({
      id: got[0].headers['webhook-id'],
      type: 'task.completed',
      status: 'delivered',
      attempts: [
        { at: expect.any(String), statusCode: 500, error: 'the receiver answered 500', durationMs: expect.any(Number) },
        { at: expect.any(String), statusCode: 500, error: 'the receiver answered 500', durationMs: expect.any(Number) },
        { at: expect.any(String), statusCode: 200, durationMs: expect.any(Number) },
      ],
    });
    expect(receiver.received.filter((x) => x.url === '/hooks/flaky')).toHaveLength(3);
    // The answer matches the OpenAPI document (responses-match-openapi covers the empty list and the errors).
    const raw = await fetch(`${h.url}/api/v1/tasks/${id}/webhook-deliveries`, { headers: { authorization: `Bearer ${API_KEY}` } });
    const observed = { status: raw.status, headers: raw.headers, body: Buffer.from(await raw.arrayBuffer()) };
    new OpenApiResponseValidator().check('GET', '/api/v1/tasks/{id}/webhook-deliveries', 200, observed);
  });

  it('gives up after WEBHOOK_MAX_ATTEMPTS on a receiver that never answers; the task is unaffected', async () => {
    h.model.script({ text: 'fine' });
    const id = (await create({ message: 'silent receiver', webhookUrl: `${silent.origin}/never` })).body.data.id;
    await finished(id);
    const [delivery] = await waitFor(
      async () => {
        const d = await deliveries(id);
        return d[0]?.status === 'failed' ? d : undefined;
      },
      15_000,
      'the delivery to fail',
    );
    expect(delivery.attempts).toHaveLength(3);
    delivery.attempts.forEach((a: { error: string; statusCode?: number }) => {
      expect(a.error).toMatch(/timed out after 300 ms/);
      expect(a.statusCode).toBeUndefined();
    });
    expect(delivery).not.toHaveProperty('nextAttemptAt');
    expect(silent.received.filter((r) => r.url === '/never')).toHaveLength(3);
    const task = (await h.api(`/api/v1/tasks/${id}`)).body.data;
    expect(task.status).toBe('completed');
    expect(task).not.toHaveProperty('error');
  });

  it("masks the task's secrets in the messages, as in tool output; a cancel sends task.cancelled", async () => {
    const token = 'tok-9f8e7d6c5b4a';
    h.model.script({ toolCalls: [{ name: 'shell', arguments: { command: `curl -H "Authorization: ${token}" x` } }] });
    const created = await create({
      message: 'use the token',
      autoExecute: false,
      secrets: { API_TOKEN: token },
      webhookUrl: `${receiver.origin}/hooks/secret`,
    });
    const id = created.body.data.id;
    const asked = await waitFor(() => receiver.received.find((r) => r.url === '/hooks/secret'), 10_000, 'the approval webhook');
    expect(asked.body).not.toContain(token);
    expect(verified(asked).data.pendingApprovals[0].args.command).toBe('curl -H "Authorization: [REDACTED:API_TOKEN]" x');
    expect((await h.api(`/api/v1/tasks/${id}/cancel`, { method: 'POST' })).status).toBe(200);
    const cancelled = await waitFor(() => receiver.received.filter((r) => r.url === '/hooks/secret')[1], 10_000, 'task.cancelled');
    expect(verified(cancelled)).toEqual({
      type: 'task.cancelled',
      timestamp: expect.any(String),
      data: { taskId: id, status: 'cancelled', turn: 1 },
    });
  });

  it('refuses a bad webhookUrl with 400 VALIDATION_ERROR naming the field, in JSON and in multipart', async () => {
    for (const webhookUrl of ['ftp://example.com/x', 'https://user:pw@example.com/', 'http://127.0.0.1:1/', 'http://10.0.0.1/', 42]) {
      const r = await create({ message: 'x', webhookUrl });
      expect(r.status).toBe(400);
      expect(r.body).toEqual({ success: false, error: { code: 'VALIDATION_ERROR', message: expect.stringContaining('webhookUrl') } });
    }
    const form = new FormData();
    form.append('message', 'multipart');
    form.append('webhookUrl', 'http://192.168.1.1/hook');
    const multipart = await h.api('/api/v1/tasks', { method: 'POST', body: form });
    expect(multipart.status).toBe(400);
    expect(multipart.body.error.message).toMatch(/webhookUrl: refused: 192\.168\.1\.1 is a private address/);
  });

  it('takes webhookUrl as a multipart text field', async () => {
    h.model.script({ text: 'ok' });
    const form = new FormData();
    form.append('message', 'multipart hook');
    form.append('webhookUrl', `${receiver.origin}/hooks/multipart`);
    const created = await h.api('/api/v1/tasks', { method: 'POST', body: form });
    expect(created.status).toBe(201);
    const id = created.body.data.id;
    const got = await waitFor(() => receiver.received.find((r) => r.url === '/hooks/multipart'));
    expect(verified(got).data).toEqual({ taskId: id, status: 'completed', turn: 1 });
  });

  it("sends to the operator's WEBHOOK_URL without ever showing it: not on the task, the list, the stream or the deliveries", async () => {
    h.model.script({ text: 'default destination' });
    const id = (await create({ message: 'no webhookUrl given' })).body.data.id;
    const got = await waitFor(
      () => receiver.received.find((r) => r.url.startsWith('/default/') && r.body.includes(id)),
      10_000,
      'the default',
    );
    expect(got.url).toContain(OPERATOR_TOKEN);
    expect(verified(got)).toMatchObject({ type: 'task.completed', data: { taskId: id } });
    const task = (await h.api(`/api/v1/tasks/${id}`)).body.data;
    expect(task.webhookUrl).toBeNull();
    const [delivery] = await waitFor(async () => {
      const d = await deliveries(id);
      return d[0]?.status === 'delivered' ? d : undefined;
    });
    expect(delivery.id).toBe(got.headers['webhook-id']);
    const surfaces = [
      JSON.stringify((await h.api(`/api/v1/tasks/${id}`)).body),
      JSON.stringify((await h.api('/api/v1/tasks?includeHidden=true')).body),
      JSON.stringify((await h.api(`/api/v1/tasks/${id}/webhook-deliveries`)).body),
      JSON.stringify(await finished(id)),
    ];
    for (const surface of surfaces) {
      expect(surface).not.toContain(OPERATOR_TOKEN);
      expect(surface).not.toContain('/default/services');
    }
    // A caller's own URL is shown back as given.
    h.model.script({ text: 'own destination' });
    const own = (await create({ message: 'own', webhookUrl: `${receiver.origin}/hooks/own` })).body.data.id;
    expect((await h.api(`/api/v1/tasks/${own}`)).body.data.webhookUrl).toBe(`${receiver.origin}/hooks/own`);
    await finished(own);
  });

  it('sends a failed message again, same webhook-id and body, with a new round of WEBHOOK_MAX_ATTEMPTS attempts; one round for two requests', async () => {
    // Down for the whole first round; then the replay's first attempt is held past the timeout (so the
    // round is surely pending while the 409s are checked: WEBHOOK_TIMEOUT_MS), and its second is answered.
    let replayed = 0;
    let up = false;
    answer = (request, res) => {
      if (request.url !== '/hooks/replay') return res.writeHead(204).end();
      if (!up) return res.writeHead(503).end();
      if (++replayed > 1) res.writeHead(204).end();
    };
    h.model.script({ text: 'done while the receiver is down' });
    const id = (
      await h.api('/api/v1/tasks', { method: 'POST', json: { message: 'replay me', webhookUrl: `${receiver.origin}/hooks/replay` } })
    ).body.data.id;
    const failed = await settled(id, 'failed', 'the first round to fail');
    expect(failed.attempts.map((a: { statusCode: number }) => a.statusCode)).toEqual([503, 503, 503]);

    up = true;
    // Two requests at once: the delivery stream's expected revision lets one through; the other finds it pending.
    const [a, b] = await Promise.all([redeliver(id, failed.id), redeliver(id, failed.id)]);
    expect([a.status, b.status].sort()).toEqual([202, 409]);
    const [accepted, refused] = a.status === 202 ? [a, b] : [b, a];
    expect(accepted.body).toEqual({
      success: true,
      data: { id: failed.id, type: 'task.completed', status: 'pending', attempts: failed.attempts },
    });
    expect(refused.body).toEqual({ success: false, error: { code: 'CONFLICT', message: expect.stringMatching(/still pending/) } });
    const again = await redeliver(id, failed.id);
    expect(again.status).toBe(409);
    expect(again.body.error.message).toBe(refused.body.error.message);

    const delivered = await settled(id, 'delivered', 'the replay to be delivered');
    // Five attempts in all, two of them in the new round (more than WEBHOOK_MAX_ATTEMPTS in all: counted anew).
    expect(delivered.attempts.map((a: { statusCode?: number }) => a.statusCode)).toEqual([503, 503, 503, undefined, 204]);
    expect(delivered.attempts[3].error).toMatch(/timed out/);
    const got = receiver.received.filter((r) => r.url === '/hooks/replay');
    expect(got).toHaveLength(5);
    expect(new Set(got.map((r) => r.headers['webhook-id']))).toEqual(new Set([failed.id]));
    expect(new Set(got.map((r) => r.body)).size).toBe(1);
    // Signed anew: standardwebhooks checks the timestamp against its tolerance too.
    expect(new Webhook(SECRET).verify(got[4].body, got[4].headers as Record<string, string>)).toMatchObject({ type: 'task.completed' });
    expect(Number(got[4].headers['webhook-timestamp'])).toBeGreaterThanOrEqual(Number(got[0].headers['webhook-timestamp']));
    const raw = await fetch(`${h.url}/api/v1/tasks/${id}/webhook-deliveries`, { headers: { authorization: `Bearer ${API_KEY}` } });
    new OpenApiResponseValidator().check('GET', '/api/v1/tasks/{id}/webhook-deliveries', 200, {
      status: raw.status,
      headers: raw.headers,
      body: Buffer.from(await raw.arrayBuffer()),
    });

    // A delivered message can be sent again too; through the typed client here.
    const client = h.client();
    expect(await client.webhookDeliveries.redeliver(id, failed.id)).toMatchObject({ id: failed.id, status: 'pending' });
    await waitFor(() => receiver.received.filter((r) => r.url === '/hooks/replay').length === 6 || undefined, 10_000, 'the second replay');
    const [last] = await waitFor(async () => {
      const d = await client.webhookDeliveries.list(id);
      return d[0]?.status === 'delivered' ? d : undefined;
    });
    expect(last.attempts).toHaveLength(6);
  });

  it("answers 404 for an unknown delivery, an unknown task and another tenant's task", async () => {
    answer = (_request, res) => res.writeHead(204).end();
    h.model.script({ text: 'delivered' });
    const id = (await h.api('/api/v1/tasks', { method: 'POST', json: { message: 'mine', webhookUrl: `${receiver.origin}/hooks/404` } }))
      .body.data.id;
    const delivered = await settled(id, 'delivered', 'the message to be delivered');
    const unknownDelivery = await redeliver(id, 'wh_00000000000000000000000000000000_9');
    expect(unknownDelivery.status).toBe(404);
    expect(unknownDelivery.body).toEqual({ success: false, error: { code: 'NOT_FOUND', message: expect.any(String) } });
    const otherTenant = await redeliver(id, delivered.id, 'test-key-tenant-b');
    expect(otherTenant.status).toBe(404);
    expect(otherTenant.body.error.code).toBe('NOT_FOUND');
    expect((await redeliver('task_00000000000000000000000000000000', delivered.id)).status).toBe(404);
    // Nothing was started by the refused requests.
    await new Promise((r) => setTimeout(r, 300));
    expect((await deliveries(id))[0]).toEqual(delivered);
    expect(receiver.received.filter((r) => r.url === '/hooks/404')).toHaveLength(1);
  });

  it("answers 404 for the deliveries of an unknown task or another tenant's", async () => {
    h.model.script({ text: 'mine' });
    const id = (await create({ message: 'tenant a' })).body.data.id;
    expect((await h.api(`/api/v1/tasks/${id}/webhook-deliveries`)).status).toBe(200);
    const other = await h.api(`/api/v1/tasks/${id}/webhook-deliveries`, { key: 'test-key-tenant-b' });
    expect(other.status).toBe(404);
    expect(other.body.error.code).toBe('NOT_FOUND');
    expect((await h.api('/api/v1/tasks/task_00000000000000000000000000000000/webhook-deliveries')).status).toBe(404);
    await finished(id);
  });
});

describe('Webhooks without WEBHOOK_SECRET', () => {
  let h: Harness;
  beforeAll(async () => (h = await startHarness({}, false)));
  afterAll(async () => h.close());

  it('refuses a webhookUrl, saying WEBHOOK_SECRET is needed; tasks show webhookUrl null', async () => {
    const r = await h.api('/api/v1/tasks', { method: 'POST', json: { message: 'x', webhookUrl: 'https://hooks.example.com/a' } });
    expect(r.status).toBe(400);
    expect(r.body.error).toEqual({ code: 'VALIDATION_ERROR', message: expect.stringMatching(/webhookUrl needs WEBHOOK_SECRET/) });
    const ok = await h.api('/api/v1/tasks', { method: 'POST', json: { message: 'x' } });
    expect((await h.api(`/api/v1/tasks/${ok.body.data.id}`)).body.data.webhookUrl).toBeNull();
  });
});
