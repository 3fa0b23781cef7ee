import type { PrivateNatsServer } from '@app/bus/testing/nats-server';
import { startPrivateNatsServer } from '@app/bus/testing/nats-server';
import type { ScriptedOpenAiServer } from '@app/model-provider/testing/scripted-openai-server';
import { startScriptedOpenAiServer } from '@app/model-provider/testing/scripted-openai-server';
import type { DistributedDeployment, ServiceInstance } from '../support/distributed-deployment';
import { startDistributedDeployment } from '../support/distributed-deployment';
import { pollDeployment } from '../support/distributed-reads';
import { Scrape } from '../support/prometheus-scrape';
import { freePort } from '../support/service-process';

// Each process of the distributed mode serves its own /metrics and /readyz (the API on its port,
// the workers on HEALTH_PORT). A scripted task with a tool call and an approval shows up in the
// metrics of the process that did each part; NATS (a server of the suite's own) going away makes
// every process unready, naming the bus, and its return makes them ready again.

jest.setTimeout(300_000);

const KEY = 'metrics-key';
const headers = { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' };

/** What each service uses, so what its /readyz names. */
const DEPENDENCIES: Record<ServiceInstance['service'], string[]> = {
  // The API's worker of the schedules' workflows (RUNNER=temporal) needs Temporal too.
  api: ['bus', 'eventStore', 'objectStore', 'temporal'],
  orchestrator: ['bus', 'eventStore', 'temporal'],
  sandbox: ['bus', 'eventStore', 'objectStore'],
  artifacts: ['bus', 'eventStore'],
};

describe('Metrics and readiness of each process of the distributed mode', () => {
  let model: ScriptedOpenAiServer;
  let nats: PrivateNatsServer;
  let d: DistributedDeployment;

  beforeAll(async () => {
    model = await startScriptedOpenAiServer();
    nats = await startPrivateNatsServer();
    d = await startDistributedDeployment(
      { api: 1, orchestrator: 1, sandbox: 1, artifacts: 1 },
      { NATS_URL: nats.url, API_KEYS: KEY, LLM_BASE_URL: model.url, LLM_MODEL: 'scripted', LLM_MAX_RETRIES: '1' },
    );
  });
  afterAll(async () => {
    await d?.close();
    await model?.close();
    await nats?.dispose();
  });

  const instance = (service: ServiceInstance['service']) => d.instances.find((i) => i.service === service)!;
  const readyz = async (i: ServiceInstance) => {
    const res = await fetch(`${i.healthUrl}/readyz`);
    return { status: res.status, body: (await res.json()) as { status: string; dependencies: Record<string, string> } };
  };
  const api = async (path: string, json?: unknown) => {
    const res = await fetch(`${d.apiUrls[0]}${path}`, {
      method: json === undefined ? 'GET' : 'POST',
      headers,
      body: json === undefined ? undefined : JSON.stringify(json),
    });
    return (await res.json()) as any;
  };
  const until = <T>(what: string, probe: () => Promise<T | undefined>, timeoutMs?: number) => pollDeployment(d, what, probe, timeoutMs);

  it('answers /readyz 200 on every process, naming the dependencies it uses', async () => {
    for (const i of d.instances) {
      const { status, body } = await readyz(i);
      expect({ service: i.service, status, body }).toEqual({
        service: i.service,
        status: 200,
        body: { status: 'ready', dependencies: Object.fromEntries(DEPENDENCIES[i.service].map((name) => [name, 'up'])) },
      });
    }
  });

  it('shows a task with a tool call and an approval in the metrics of the process that did each part', async () => {
    model.script({ toolCalls: [{ name: 'write_file', arguments: { path: 'downloads/m.md', content: 'm' } }] }, { text: 'Done.' });
    const id = (await api('/api/v1/tasks', { message: 'metrics', autoExecute: false })).data.id as string;
    const callId = await until('the approval request', async () => (await api(`/api/v1/tasks/${id}`)).data.pendingApprovals[0]?.callId);
    await api(`/api/v1/tasks/${id}/tools/${callId}/approve`, { outcome: 'proceed_once' });
    await until('the task to complete', async () => ((await api(`/api/v1/tasks/${id}`)).data.status === 'completed' ? true : undefined));

    const [apiScrape, orchestrator, sandbox, artifacts] = await Promise.all(
      (['api', 'orchestrator', 'sandbox', 'artifacts'] as const).map((s) => Scrape.of(`${instance(s).healthUrl}/metrics`)),
    );
    expect(
      apiScrape.histograms('ats_http_request_duration_seconds', { method: 'POST', route: '/api/v1/tasks', status: '201' })[0]?.count,
    ).toBe(1);
    expect(apiScrape.value('ats_tasks', 'gauge', { status: 'completed' })).toBe(1);
    // The approval is decided by the API process: it appends the decision.
    expect(apiScrape.histograms('ats_approval_wait_seconds', { outcome: 'proceed_once' })[0]?.count).toBe(1);

    expect(orchestrator.value('ats_turns_started_total', 'counter')).toBe(1);
    expect(orchestrator.value('ats_turns_finished_total', 'counter', { outcome: 'completed' })).toBe(1);
    expect(orchestrator.histograms('ats_model_call_duration_seconds', { model: 'scripted', outcome: 'ok' })[0]?.count).toBe(2);
    expect(orchestrator.value('ats_model_tokens_total', 'counter', { direction: 'out' })).toBeGreaterThan(0);
    // The same calls in the OpenTelemetry GenAI client metrics, under their Prometheus names.
    const chat = { gen_ai_operation_name: 'chat', gen_ai_provider_name: 'openai', gen_ai_request_model: 'scripted' };
    expect(orchestrator.histograms('gen_ai_client_operation_duration_seconds', chat)[0]?.count).toBe(2);
    expect(orchestrator.histograms('gen_ai_client_token_usage', { ...chat, gen_ai_token_type: 'output' })[0]?.count).toBe(2);
    expect(
      orchestrator.histograms('ats_bus_request_duration_seconds', { subject: 'sandbox.command.execute_tool', outcome: 'ok' })[0]?.count,
    ).toBe(1);
    expect(orchestrator.histograms('ats_event_store_append_duration_seconds', { outcome: 'ok' })[0]?.count).toBeGreaterThan(3);

    expect(sandbox.histograms('ats_tool_run_duration_seconds', { tool: 'write_file', status: 'success' })[0]?.count).toBe(1);
    expect(sandbox.value('ats_sandboxes_live', 'gauge')).toBe(1);
    // Tasks by status come from the API only: summed over processes, they would be counted once per service.
    expect(sandbox.samples('ats_tasks', 'gauge')).toEqual([]);
    expect(artifacts.family('ats_event_store_append_duration_seconds', 'histogram')).toBeDefined();
  });

  it('answers 503 naming the bus on every process while NATS is down, and 200 once it is back', async () => {
    await nats.kill();
    try {
      for (const i of d.instances) {
        const down = await until(`${i.service} to be unready`, async () => {
          const r = await readyz(i);
          return r.status === 503 ? r : undefined;
        });
        expect({ service: i.service, body: down.body }).toEqual({
          service: i.service,
          body: {
            status: 'unavailable',
            dependencies: Object.fromEntries(DEPENDENCIES[i.service].map((name) => [name, name === 'bus' ? 'down' : 'up'])),
          },
        });
        // Liveness is not readiness: the process still lives.
        expect((await fetch(`${i.healthUrl}/healthz`)).status).toBe(200);
      }
    } finally {
      await nats.start();
    }
    for (const i of d.instances) {
      await until(`${i.service} to be ready again`, async () => ((await readyz(i)).status === 200 ? true : undefined), 60_000);
    }
  });

  it('answers 503 naming the object store when MinIO cannot be reached', async () => {
    const sandbox = instance('sandbox');
    await sandbox.process.stop();
    // Nothing listens on a port just freed: every MinIO call is refused.
    await d.restart(sandbox, { MINIO_ENDPOINT: `http://127.0.0.1:${await freePort()}` });
    try {
      const { status, body } = await readyz(sandbox);
      expect(status).toBe(503);
      expect(body).toEqual({ status: 'unavailable', dependencies: { bus: 'up', eventStore: 'up', objectStore: 'down' } });
    } finally {
      await sandbox.process.stop();
      await d.restart(sandbox);
    }
    expect((await readyz(sandbox)).status).toBe(200);
  });
});
