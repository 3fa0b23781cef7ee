import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ScriptedOpenAiServer } from '@app/model-provider/testing/scripted-openai-server';
import { startScriptedOpenAiServer } from '@app/model-provider/testing/scripted-openai-server';
import type { OtlpReceiver } from '../support/otlp/otlp-receiver';
import { startOtlpReceiver } from '../support/otlp/otlp-receiver';
import type { ServiceProcess } from '../support/service-process';
import { freePort, startServiceProcess } from '../support/service-process';

// The all-in-one process (`npm start`) with tracing off loads no OpenTelemetry SDK, only the API
// (whose calls are then no-ops); with OTEL_EXPORTER_OTLP_ENDPOINT set, a turn is one trace from
// the request to the model call and the tool run.

jest.setTimeout(120_000);

const KEY = 'tracing-key';
const PROBE = join(__dirname, '..', '..', 'scripts', 'print-loaded-otel-modules.js');

/** The OpenTelemetry packages the process has loaded, as the preloaded probe reports them. */
async function loadedOtelModules(service: ServiceProcess): Promise<string[]> {
  const before = service.output().length;
  service.child.kill('SIGWINCH');
  for (const until = Date.now() + 5_000; Date.now() < until; await new Promise((r) => setTimeout(r, 20))) {
    const line = /loaded-otel-modules (\[.*\])/.exec(service.output().slice(before));
    if (line) return JSON.parse(line[1]) as string[];
  }
  throw new Error(`no report of the loaded modules:\n${service.output()}`);
}

describe('Tracing in the all-in-one process', () => {
  let dataDir: string;
  let model: ScriptedOpenAiServer;
  let receiver: OtlpReceiver;
  let service: ServiceProcess | undefined;

  beforeAll(async () => {
    model = await startScriptedOpenAiServer();
    receiver = await startOtlpReceiver();
  });
  beforeEach(async () => (dataDir = await mkdtemp(join(tmpdir(), 'ats-tracing-'))));
  afterEach(async () => {
    await service?.stop();
    service = undefined;
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });
  afterAll(async () => {
    await model.close();
    await receiver.close();
  });

  const env = (extra: Record<string, string> = {}) => ({
    DATA_DIR: dataDir,
    API_KEYS: KEY,
    LLM_BASE_URL: model.url,
    LLM_MODEL: 'scripted',
    NODE_OPTIONS: `--require ${PROBE}`,
    ...extra,
  });
  const api = async (path: string, json?: unknown) => {
    const res = await fetch(`${service!.url}${path}`, {
      method: json === undefined ? 'GET' : 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: json === undefined ? undefined : JSON.stringify(json),
    });
    return (await res.json()) as any;
  };
  const until = async <T>(what: string, probe: () => Promise<T | undefined> | T | undefined): Promise<T> => {
    for (const deadline = Date.now() + 30_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 50))) {
      const value = await probe();
      if (value !== undefined) return value;
    }
    throw new Error(`timed out waiting for ${what}:\n${service?.output()}`);
  };
  const runTaskWithToolCall = async () => {
    model.script({ toolCalls: [{ name: 'write_file', arguments: { path: 'downloads/t.md', content: 't' } }] }, { text: 'Done.' });
    const id = (await api('/api/v1/tasks', { message: 'trace me' })).data.id as string;
    await until('the task to complete', async () => ((await api(`/api/v1/tasks/${id}`)).data.status === 'completed' ? true : undefined));
    return id;
  };

  it('loads no OpenTelemetry SDK module with OTEL_EXPORTER_OTLP_ENDPOINT unset, only the no-op API', async () => {
    service = await startServiceProcess(env(), await freePort());
    await runTaskWithToolCall();
    expect(await loadedOtelModules(service)).toEqual(['@opentelemetry/api']);
    expect(receiver.spans).toEqual([]);
  });

  it('exports one trace per turn with it set: the request, the model calls and the tool run', async () => {
    service = await startServiceProcess(
      env({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: '100' }),
      await freePort(),
    );
    expect(await loadedOtelModules(service)).toEqual(
      expect.arrayContaining(['@opentelemetry/sdk-trace-base', '@opentelemetry/exporter-trace-otlp-proto']),
    );
    const id = await runTaskWithToolCall();

    const create = await until('the span of the create request', () => receiver.spans.find((s) => s.name === 'POST /api/v1/tasks'));
    const trace = await until('the tool run in the same trace', () => {
      const spans = receiver.spans.filter((s) => s.traceId === create.traceId);
      return spans.filter((s) => s.name === 'chat scripted').length === 2 && spans.some((s) => s.name === 'tool.run') ? spans : undefined;
    });
    expect(new Set(trace.map((s) => s.service))).toEqual(new Set(['agentic-task-service']));
    expect(trace.filter((s) => s.parentSpanId === '').map((s) => s.name)).toEqual(['POST /api/v1/tasks']);
    const ids = new Set(trace.map((s) => s.spanId));
    expect(trace.filter((s) => s.parentSpanId !== '' && !ids.has(s.parentSpanId))).toEqual([]);
    expect(trace.find((s) => s.name === 'tool.run')?.attributes).toMatchObject({ 'task.id': id, 'tool.name': 'write_file' });
  });

  it('makes no span for the probes and the scrape: /healthz, /readyz, /metrics', async () => {
    service = await startServiceProcess(
      env({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: '100' }),
      await freePort(),
    );
    for (const path of ['/healthz', '/readyz', '/metrics']) expect((await fetch(`${service.url}${path}`)).status).toBe(200);
    await api('/api/v1/tasks');
    // Ended after the probes', this span's export means theirs would have gone too.
    await until('the span of the list request', () => receiver.spans.find((s) => s.name === 'GET /api/v1/tasks'));
    const routes = new Set(receiver.spans.map((s) => s.attributes['http.route']));
    expect(['/healthz', '/readyz', '/metrics'].filter((route) => routes.has(route))).toEqual([]);
  });

  it("keeps a request's query and body out of its span: the route in place of the path, no error message", async () => {
    service = await startServiceProcess(
      env({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: '100' }),
      await freePort(),
    );
    await fetch(`${service.url}/api/v1/tasks?query-text-that-must-stay-out=1`, { headers: { authorization: `Bearer ${KEY}` } });
    const refused = await fetch(`${service.url}/api/v1/tasks`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: '{"message": body-text-that-must-stay-out',
    });
    expect(refused.status).toBe(400);

    // Ended after the list's, the refused create's span being exported means the list's was too.
    const create = await until('the span of the refused create', () =>
      receiver.spans.find((s) => s.name === 'POST /api/v1/tasks' && s.attributes['http.response.status_code'] === '400'),
    );
    const lists = receiver.spans.filter((s) => s.name === 'GET /api/v1/tasks');
    expect(lists.length).toBeGreaterThan(0);
    for (const list of lists) expect(list.attributes).toMatchObject({ 'http.route': '/api/v1/tasks', 'url.path': '/api/v1/tasks' });
    // @fastify/otel would set the error's message as the status's (here Fastify's own words, but
    // a message can quote what a client sent) and record the exception as an event: neither.
    expect(create).toMatchObject({ statusMessage: '', eventAttributes: [] });
    const everything = JSON.stringify(receiver.spans);
    for (const text of ['query-text-that-must-stay-out', 'body-text-that-must-stay-out']) expect(everything).not.toContain(text);
  });

  it('ends and exports the span of an SSE stream its client closes', async () => {
    service = await startServiceProcess(
      env({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: '100' }),
      await freePort(),
    );
    const id = await runTaskWithToolCall();
    const streams = () => receiver.spans.filter((s) => s.name === 'GET /api/v1/tasks/:id/stream');
    const client = new AbortController();
    const stream = await fetch(`${service.url}/api/v1/tasks/${id}/stream`, {
      headers: { authorization: `Bearer ${KEY}`, accept: 'text/event-stream' },
      signal: client.signal,
    });
    expect(stream.status).toBe(200);
    await stream.body!.getReader().read(); // the stream is open and has sent something
    expect(streams()).toEqual([]);
    client.abort();

    const [span] = await until('the stream span after its client left', () => (streams().length > 0 ? streams() : undefined));
    expect(span.attributes).toMatchObject({ 'http.response.status_code': '200' }); // int64 values come decoded as strings
  });

  it('exports the spans still batched when the process is stopped (SIGTERM)', async () => {
    // A batch delay far past the test: only the shutdown can send them.
    service = await startServiceProcess(
      env({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: '600000' }),
      await freePort(),
    );
    const id = await runTaskWithToolCall();
    expect(receiver.spans.filter((s) => s.attributes['task.id'] === id)).toEqual([]);
    await service.stop();
    service = undefined;
    expect(receiver.spans.filter((s) => s.name === 'tool.run' && s.attributes['task.id'] === id)).toHaveLength(1);
  });
});
