import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ScriptedOpenAiServer } from '@app/model-provider/testing/scripted-openai-server';
import { startScriptedOpenAiServer } from '@app/model-provider/testing/scripted-openai-server';
import type { OtlpReceiver } from '../support/otlp/otlp-receiver';
import { startOtlpReceiver } from '../support/otlp/otlp-receiver';
import type { ServiceProcess } from '../support/service-process';
import { freePort, startServiceProcess } from '../support/service-process';

// The API's request log line (LOG_LEVEL=debug) names the trace of its own request. An SSE stream
// ends when its turn's `done` is delivered, in the turn's trace context: the line once carried
// the turn's trace id instead of the stream request's.

jest.setTimeout(120_000);

const KEY = 'request-log-trace-key';

interface LogLine {
  readonly context?: string;
  readonly route?: string;
  readonly traceId?: string;
  readonly turnTraceId?: string;
}

describe("The request log line's trace id", () => {
  let dataDir: string;
  let model: ScriptedOpenAiServer;
  let receiver: OtlpReceiver;
  let service: ServiceProcess;

  beforeAll(async () => {
    model = await startScriptedOpenAiServer();
    receiver = await startOtlpReceiver();
    dataDir = await mkdtemp(join(tmpdir(), 'ats-request-log-trace-'));
    service = await startServiceProcess(
      {
        DATA_DIR: dataDir,
        API_KEYS: KEY,
        LLM_BASE_URL: model.url,
        LLM_MODEL: 'scripted',
        LOG_LEVEL: 'debug',
        LOG_FORMAT: 'json',
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
        OTEL_BSP_SCHEDULE_DELAY: '100',
      },
      await freePort(),
    );
  });
  afterAll(async () => {
    await service?.stop();
    await model?.close();
    await receiver?.close();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  const until = async <T>(what: string, probe: () => T | undefined): Promise<T> => {
    for (const deadline = Date.now() + 30_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 50))) {
      const value = probe();
      if (value !== undefined) return value;
    }
    throw new Error(`timed out waiting for ${what}:\n${service.output()}`);
  };
  const requestLines = (route: string): LogLine[] =>
    service
      .stdout()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as LogLine)
      .filter((line) => line.context === 'Http' && line.route === route);

  it("GET …/stream that ends with its turn is logged with the stream request's trace id, not the turn's", async () => {
    model.script({ text: 'Done.', delayMs: 1_500 });
    const created = await fetch(`${service.url}/api/v1/tasks`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ message: 'stream me' }),
    });
    const id = ((await created.json()) as { data: { id: string } }).data.id;

    // Opened while the model still answers: the stream ends when the turn's `done` arrives.
    const stream = await fetch(`${service.url}/api/v1/tasks/${id}/stream`, {
      headers: { authorization: `Bearer ${KEY}`, accept: 'text/event-stream' },
    });
    expect(stream.status).toBe(200);
    expect(await stream.text()).toContain('event: done');

    const streamSpan = await until('the span of the stream', () => receiver.spans.find((s) => s.name === 'GET /api/v1/tasks/:id/stream'));
    const createSpan = await until('the span of the create', () => receiver.spans.find((s) => s.name === 'POST /api/v1/tasks'));
    expect(streamSpan.traceId).not.toBe(createSpan.traceId);
    const [line] = await until('the log line of the stream', () => {
      const lines = requestLines('/api/v1/tasks/:id/stream');
      return lines.length > 0 ? lines : undefined;
    });
    expect(line.traceId).toBe(streamSpan.traceId);
    expect(line.turnTraceId).toBe(createSpan.traceId);
    const [createLine] = requestLines('/api/v1/tasks');
    expect(createLine.traceId).toBe(createSpan.traceId);
  });
});
