import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { Webhook } from 'standardwebhooks';
import type { ScriptedOpenAiServer } from '@app/model-provider/testing/scripted-openai-server';
import { startScriptedOpenAiServer } from '@app/model-provider/testing/scripted-openai-server';
import type { ReceivedRequest, WebhookReceiver } from '@app/webhooks/testing/webhook-receiver';
import { startWebhookReceiver } from '@app/webhooks/testing/webhook-receiver';
import type { DistributedDeployment } from '../support/distributed-deployment';
import { startDistributedDeployment } from '../support/distributed-deployment';
import { pollDeployment } from '../support/distributed-reads';

// Issue 16, "Done when": kill -9 of the dispatcher's process between the event and its delivery,
// in the distributed mode. Every orchestrator runs a dispatcher; both are killed while the first
// attempt is held open by the receiver (claimed, never recorded), so no dispatcher survives to
// take over: the restarted ones must find the message again from the store and their checkpoint,
// wait out the dead attempt's lease, and deliver it with the same webhook-id.

jest.setTimeout(180_000);

const KEY = 'webhook-loss-key';
const SECRET = `whsec_${randomBytes(32).toString('base64')}`;
/** Long enough that the held attempt is still in flight when its process dies. */
const TIMEOUT_MS = 5000;
/** WEBHOOK_TIMEOUT_MS plus the dispatcher's lease margin (LEASE_MARGIN_MS): how long the dead attempt's claim holds. */
const LEASE_MS = TIMEOUT_MS + 10_000;

describe('Webhook dispatchers killed mid-attempt (distributed mode)', () => {
  let model: ScriptedOpenAiServer;
  let receiver: WebhookReceiver;
  let d: DistributedDeployment;
  /** Whether the receiver holds requests (never answers) or answers 204. */
  let holding = true;

  beforeAll(async () => {
    model = await startScriptedOpenAiServer();
    receiver = await startWebhookReceiver((_request, res) => {
      if (!holding) res.writeHead(204).end();
    });
    d = await startDistributedDeployment(
      { api: 1, orchestrator: 2, sandbox: 1, artifacts: 0 },
      {
        API_KEYS: KEY,
        LLM_BASE_URL: model.url,
        LLM_MODEL: 'scripted',
        LLM_MAX_RETRIES: '0',
        WEBHOOK_SECRET: SECRET,
        WEBHOOK_ALLOW_HOSTS: `127.0.0.1:${receiver.port}`,
        WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS),
        WEBHOOK_RETRY_BASE_MS: '200',
      },
    );
  });
  afterAll(async () => {
    if (process.env.ATS_DIST_LOG && d) await writeFile(process.env.ATS_DIST_LOG, d.output());
    await d?.close();
    await receiver?.close();
    await model?.close();
  });

  const api = async (path: string, init: { method?: string; json?: unknown } = {}) => {
    const res = await fetch(`${d.apiUrls[0]}${path}`, {
      method: init.method ?? 'GET',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: init.json === undefined ? undefined : JSON.stringify(init.json),
    });
    return { status: res.status, body: (await res.json()) as any };
  };
  const until = <T>(what: string, probe: () => Promise<T | undefined>, timeoutMs?: number) => pollDeployment(d, what, probe, timeoutMs);
  const hooks = () => receiver.received.filter((r) => r.url === '/hooks/loss');

  it('delivers the message after every dispatcher was killed during its attempt, with the same webhook-id', async () => {
    const orchestrators = d.instances.filter((i) => i.service === 'orchestrator');
    model.script({ text: 'done before the crash' });
    const created = await api('/api/v1/tasks', {
      method: 'POST',
      json: { message: 'tell me', webhookUrl: `${receiver.origin}/hooks/loss` },
    });
    expect(created.status).toBe(201);
    const id = created.body.data.id;

    const [held] = await until('the first attempt to reach the receiver', async () => (hooks().length === 1 ? hooks() : undefined));
    const heldAt = Date.now();
    await Promise.all(orchestrators.map((o) => o.process.kill9()));
    // Its attempt was claimed and never recorded: pending, no attempt shown.
    const [inFlight] = (await api(`/api/v1/tasks/${id}/webhook-deliveries`)).body.data.deliveries;
    expect(inFlight).toMatchObject({ id: held.headers['webhook-id'], status: 'pending', attempts: [] });

    holding = false;
    await Promise.all(orchestrators.map((o) => d.restart(o)));
    const [delivery] = await until(
      'the message to be delivered after the restart',
      async () => {
        const shown = (await api(`/api/v1/tasks/${id}/webhook-deliveries`)).body.data.deliveries;
        return shown[0]?.status === 'delivered' ? shown : undefined;
      },
      90_000,
    );
    const got: ReceivedRequest[] = hooks();
    expect(got).toHaveLength(2);
    expect(new Set(got.map((r) => r.headers['webhook-id'])).size).toBe(1);
    got.forEach((r) =>
      expect(new Webhook(SECRET).verify(r.body, r.headers as Record<string, string>)).toMatchObject({ type: 'task.completed' }),
    );
    expect(delivery).toEqual({
      id: held.headers['webhook-id'],
      type: 'task.completed',
      status: 'delivered',
      attempts: [{ at: expect.any(String), statusCode: 204, durationMs: expect.any(Number) }],
    });
    // Not before the dead attempt's claim ran out: of several dispatchers, none attempts a claimed message early.
    expect(Date.parse(delivery.attempts[0].at)).toBeGreaterThanOrEqual(heldAt + LEASE_MS - 1000);
    expect((await api(`/api/v1/tasks/${id}`)).body.data.status).toBe('completed');
  });
});
