import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ScriptedOpenAiServer } from '@app/model-provider/testing/scripted-openai-server';
import { startScriptedOpenAiServer } from '@app/model-provider/testing/scripted-openai-server';
import type { OtlpReceiver, ReceivedSpan } from '../support/otlp/otlp-receiver';
import { startOtlpReceiver } from '../support/otlp/otlp-receiver';
import { Scrape } from '../support/prometheus-scrape';
import type { ServiceProcess } from '../support/service-process';
import { freePort, startServiceProcess } from '../support/service-process';

// The OpenTelemetry GenAI conventions on the all-in-one process, as a collector and Prometheus
// see them: a `chat <model>` client span per model call and an `execute_tool <tool>` span per tool
// call, exported over OTLP; the gen_ai client metrics at /metrics. Message content only with
// OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true, and then with the task's secret masked.

jest.setTimeout(120_000);

const KEY = 'genai-key';
const SECRET = 'tok-genai-5ecret-c4n4ry-value';
/** OTLP's SpanKind: SPAN_KIND_INTERNAL = 1, SPAN_KIND_CLIENT = 3. */
const INTERNAL = 1;
const CLIENT = 3;

describe('GenAI telemetry of the all-in-one process', () => {
  let dataDir: string;
  let model: ScriptedOpenAiServer;
  let receiver: OtlpReceiver;
  let service: ServiceProcess | undefined;

  beforeAll(async () => {
    model = await startScriptedOpenAiServer();
    receiver = await startOtlpReceiver();
  });
  beforeEach(async () => (dataDir = await mkdtemp(join(tmpdir(), 'ats-genai-'))));
  afterEach(async () => {
    await service?.stop();
    service = undefined;
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });
  afterAll(async () => {
    await model.close();
    await receiver.close();
  });

  const start = async (extra: Record<string, string> = {}) => {
    service = await startServiceProcess(
      {
        DATA_DIR: dataDir,
        API_KEYS: KEY,
        LLM_BASE_URL: model.url,
        LLM_MODEL: 'scripted',
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
        OTEL_BSP_SCHEDULE_DELAY: '100',
        ...extra,
      },
      await freePort(),
    );
  };
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

  /**
   * A turn with the secret in every place content can carry it: the caller's message, the model's
   * tool call arguments and its final answer (the model answers what it was told, scripted here).
   */
  const runTurnWithSecret = async () => {
    model.script(
      {
        toolCalls: [{ name: 'write_file', arguments: { path: 'downloads/key.md', content: `the key is ${SECRET}` } }],
        model: 'scripted-2026-11-01',
        usage: { inputTokens: 321, outputTokens: 45 },
      },
      { text: `Wrote ${SECRET} down.`, usage: { inputTokens: 400, outputTokens: 12 } },
    );
    const created = await api('/api/v1/tasks', { message: `Note the key ${SECRET} in a file`, secrets: { API_TOKEN: SECRET } });
    const id = created.data?.id as string;
    if (!id) throw new Error(`task not created: ${JSON.stringify(created)}`);
    await until('the task to complete', async () => ((await api(`/api/v1/tasks/${id}`)).data.status === 'completed' ? true : undefined));
    // The turn's trace: the one its steps are in.
    const step = await until('a step of the task', () =>
      receiver.spans.find((s) => s.name === 'agent.step' && s.attributes['task.id'] === id),
    );
    return until('two chat spans and an execute_tool span in the turn', () => {
      const spans = receiver.spans.filter((s) => s.traceId === step.traceId);
      const chats = spans.filter((s) => s.name === 'chat scripted');
      const tools = spans.filter((s) => s.name === 'execute_tool write_file');
      return chats.length === 2 && tools.length === 1 ? { spans, chats, tool: tools[0] } : undefined;
    });
  };
  const everything = (spans: readonly ReceivedSpan[]) => JSON.stringify(spans);

  it('exports chat and execute_tool spans with the GenAI attributes, no content by default, and the gen_ai metrics at /metrics', async () => {
    await start();
    const { spans, chats, tool } = await runTurnWithSecret();
    const [first, second] = chats;
    expect(first.kind).toBe(CLIENT);
    // int64 values come decoded as strings.
    expect(first.attributes).toEqual({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'openai',
      'gen_ai.request.model': 'scripted',
      'gen_ai.response.model': 'scripted-2026-11-01',
      'gen_ai.response.id': 'chatcmpl-scripted',
      'gen_ai.response.finish_reasons': ['tool_calls'],
      'gen_ai.usage.input_tokens': '321',
      'gen_ai.usage.output_tokens': '45',
    });
    expect(second.attributes).toMatchObject({
      'gen_ai.response.model': 'scripted',
      'gen_ai.response.finish_reasons': ['stop'],
      'gen_ai.usage.input_tokens': '400',
      'gen_ai.usage.output_tokens': '12',
    });
    expect(tool.kind).toBe(INTERNAL);
    expect(tool.attributes).toEqual({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'write_file',
      'gen_ai.tool.call.id': expect.stringMatching(/^call_/),
      'gen_ai.tool.type': 'function',
    });
    // The sandbox's run of the call is inside its execute_tool span.
    const ids = new Map(spans.map((s) => [s.spanId, s]));
    const ancestors = (s: ReceivedSpan): string[] =>
      ids.has(s.parentSpanId) ? [ids.get(s.parentSpanId)!.name, ...ancestors(ids.get(s.parentSpanId)!)] : [];
    expect(ancestors(spans.find((s) => s.name === 'tool.run')!)).toContain('execute_tool write_file');
    const text = everything(spans);
    for (const content of [
      'gen_ai.input.messages',
      'gen_ai.output.messages',
      'gen_ai.tool.call.arguments',
      'gen_ai.tool.call.result',
      'Note the key',
      'Wrote',
    ])
      expect(text).not.toContain(content);
    expect(text).not.toContain(SECRET);

    const scrape = await Scrape.of(`${service!.url}/metrics`);
    const chat = { gen_ai_operation_name: 'chat', gen_ai_provider_name: 'openai', gen_ai_request_model: 'scripted' };
    const tokens = (response: string, type: string) =>
      scrape.histograms('gen_ai_client_token_usage', { ...chat, gen_ai_response_model: response, gen_ai_token_type: type });
    expect(tokens('scripted-2026-11-01', 'input')).toEqual([expect.objectContaining({ count: 1, sum: 321 })]);
    expect(tokens('scripted-2026-11-01', 'output')).toEqual([expect.objectContaining({ count: 1, sum: 45 })]);
    expect(tokens('scripted', 'input')).toEqual([expect.objectContaining({ count: 1, sum: 400 })]);
    const durations = scrape.histograms('gen_ai_client_operation_duration_seconds', chat);
    expect(durations.reduce((n, s) => n + s.count, 0)).toBe(2);
    expect(durations.every((s) => (s.sum ?? 0) > 0)).toBe(true);
  });

  it('marks a tool call that ended in error with error.type, its name as the model called it', async () => {
    await start();
    model.script({ toolCalls: [{ name: 'no_such_tool', arguments: {} }] }, { text: 'That tool does not exist.' });
    const id = (await api('/api/v1/tasks', { message: 'call a tool that is not there' })).data.id as string;
    await until('the task to complete', async () => ((await api(`/api/v1/tasks/${id}`)).data.status === 'completed' ? true : undefined));
    const tool = await until('the execute_tool span', () => receiver.spans.find((s) => s.name === 'execute_tool no_such_tool'));
    expect(tool.attributes).toMatchObject({ 'gen_ai.tool.name': 'no_such_tool', 'error.type': 'tool_error' });
  });

  it('puts the messages and the tool call content on the spans with OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true, the secret redacted', async () => {
    await start({ OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: 'true' });
    const { spans, chats, tool } = await runTurnWithSecret();
    expect(everything(spans)).not.toContain(SECRET);

    const [first, second] = chats.map((s) => ({
      input: JSON.parse(s.attributes['gen_ai.input.messages'] as string) as any[],
      output: JSON.parse(s.attributes['gen_ai.output.messages'] as string) as any[],
    }));
    expect(first.input).toContainEqual({ role: 'user', parts: [{ type: 'text', content: 'Note the key [REDACTED:API_TOKEN] in a file' }] });
    expect(first.output).toEqual([
      {
        role: 'assistant',
        parts: [
          {
            type: 'tool_call',
            id: expect.any(String),
            name: 'write_file',
            arguments: { path: 'downloads/key.md', content: 'the key is [REDACTED:API_TOKEN]' },
          },
        ],
        finish_reason: 'tool_calls',
      },
    ]);
    expect(second.input.at(-1)).toEqual({
      role: 'tool',
      parts: [{ type: 'tool_call_response', id: expect.any(String), response: expect.any(String) }],
    });
    expect(second.output).toEqual([
      { role: 'assistant', parts: [{ type: 'text', content: 'Wrote [REDACTED:API_TOKEN] down.' }], finish_reason: 'stop' },
    ]);
    expect(JSON.parse(tool.attributes['gen_ai.tool.call.arguments'] as string)).toEqual({
      path: 'downloads/key.md',
      content: 'the key is [REDACTED:API_TOKEN]',
    });
    expect(tool.attributes['gen_ai.tool.call.result']).toEqual(expect.any(String));
  });
});
