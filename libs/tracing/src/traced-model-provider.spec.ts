import { SpanKind, context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { ModelProvider, ModelRequest, ModelResponse } from '@app/model-provider';
import { ModelProviderError } from '@app/model-provider';
import { genAiTargetFromEnv } from './gen-ai';
import type { ContentRedactor } from './traced-model-provider';
import { traceModelProvider } from './traced-model-provider';

const SECRET = 'sk-live-0123456789';

const request: ModelRequest = {
  messages: [
    { role: 'system', content: 'You are an agent.' },
    { role: 'user', content: `Use the key ${SECRET}` },
    { role: 'assistant', content: null, toolCalls: [{ id: 'tc_1', name: 'shell', arguments: { command: `echo ${SECRET}` } }] },
    { role: 'tool', toolCallId: 'tc_1', content: `printed ${SECRET}` },
  ],
  tools: [],
};

const response: ModelResponse = {
  text: `Done with ${SECRET}.`,
  toolCalls: [{ id: 'tc_2', name: 'write_file', arguments: { path: 'a.md', content: SECRET } }],
  usage: { inputTokens: 120, outputTokens: 30, totalTokens: 150, cacheReadTokens: 100, cacheWriteTokens: 0 },
  model: 'gpt-4o-2024-08-06',
  finishReason: 'tool_calls',
  id: 'chatcmpl-abc123',
};

const answering = (answer: ModelResponse | Error): ModelProvider => ({
  name: 'openai',
  complete: async () => {
    if (answer instanceof Error) throw answer;
    return answer;
  },
});

/** What the runtime's redactor does with a task's vault: every string, every form of the secret. */
const redact: ContentRedactor = (value) => JSON.parse(JSON.stringify(value).split(SECRET).join('[REDACTED:KEY]')) as typeof value;

describe('traceModelProvider', () => {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  beforeAll(() => {
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    trace.setGlobalTracerProvider(provider);
  });
  afterAll(async () => {
    await provider.shutdown();
    trace.disable();
    context.disable();
  });
  beforeEach(() => exporter.reset());

  const openai = genAiTargetFromEnv({ LLM_API_KEY: 'k', LLM_MODEL: 'gpt-4o' });
  const onlySpan = () => {
    const spans = exporter.getFinishedSpans();
    expect(spans).toHaveLength(1);
    return spans[0];
  };

  it('names the span `chat <model>`, a client span with the GenAI attributes of the request and the answer', async () => {
    await traceModelProvider(answering(response), { target: openai }).complete(request);
    const span = onlySpan();
    expect(span.name).toBe('chat gpt-4o');
    expect(span.kind).toBe(SpanKind.CLIENT);
    expect(span.attributes).toEqual({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'openai',
      'gen_ai.request.model': 'gpt-4o',
      'gen_ai.response.model': 'gpt-4o-2024-08-06',
      'gen_ai.response.id': 'chatcmpl-abc123',
      'gen_ai.response.finish_reasons': ['tool_calls'],
      'gen_ai.usage.input_tokens': 120,
      'gen_ai.usage.output_tokens': 30,
      'gen_ai.usage.cache_read.input_tokens': 100,
    });
  });

  it("names Anthropic's calls `anthropic` with the max_tokens each request sends, and an OpenAI-compatible endpoint `openai`", async () => {
    const anthropic = genAiTargetFromEnv({ LLM_PROVIDER: 'anthropic', LLM_API_KEY: 'k', LLM_MODEL: 'claude-x', LLM_MAX_TOKENS: '2048' });
    const usage = { ...response.usage, cacheReadTokens: 0, cacheWriteTokens: 7 };
    await traceModelProvider(answering({ ...response, usage, finishReason: 'length' }), { target: anthropic }).complete(request);
    expect(onlySpan().attributes).toMatchObject({
      'gen_ai.provider.name': 'anthropic',
      'gen_ai.request.max_tokens': 2048,
      'gen_ai.response.finish_reasons': ['length'],
      'gen_ai.usage.cache_creation.input_tokens': 7,
    });
    expect(onlySpan().attributes).not.toHaveProperty('gen_ai.usage.cache_read.input_tokens');
    expect(genAiTargetFromEnv({ LLM_BASE_URL: 'http://127.0.0.1:11434/v1', LLM_MODEL: 'qwen' })).toEqual({
      providerName: 'openai',
      requestModel: 'qwen',
    });
  });

  it("records a failure's class as error.type, never its message", async () => {
    const failing = traceModelProvider(answering(new ModelProviderError(`refused ${SECRET}`, false)), { target: openai });
    await expect(failing.complete(request)).rejects.toThrow(ModelProviderError);
    const span = onlySpan();
    expect(span.attributes).toMatchObject({ 'error.type': 'ModelProviderError', 'gen_ai.request.model': 'gpt-4o' });
    expect(span.status.message).toBe('ModelProviderError');
    expect(JSON.stringify([span.attributes, span.events, span.status])).not.toContain(SECRET);
  });

  it('records no message content by default', async () => {
    await traceModelProvider(answering(response), { target: openai }).complete(request);
    const attributes = onlySpan().attributes;
    expect(attributes).not.toHaveProperty('gen_ai.input.messages');
    expect(attributes).not.toHaveProperty('gen_ai.output.messages');
    expect(JSON.stringify(onlySpan().attributes)).not.toMatch(/agent|Done|echo/);
  });

  it('records the conversation and the answer as the conventions shape them when capture is on, redacted', async () => {
    await traceModelProvider(answering(response), { target: openai, captureContent: redact }).complete(request);
    const attributes = onlySpan().attributes;
    expect(JSON.stringify(attributes)).not.toContain(SECRET);
    expect(JSON.parse(attributes['gen_ai.input.messages'] as string)).toEqual([
      { role: 'system', parts: [{ type: 'text', content: 'You are an agent.' }] },
      { role: 'user', parts: [{ type: 'text', content: 'Use the key [REDACTED:KEY]' }] },
      { role: 'assistant', parts: [{ type: 'tool_call', id: 'tc_1', name: 'shell', arguments: { command: 'echo [REDACTED:KEY]' } }] },
      { role: 'tool', parts: [{ type: 'tool_call_response', id: 'tc_1', response: 'printed [REDACTED:KEY]' }] },
    ]);
    expect(JSON.parse(attributes['gen_ai.output.messages'] as string)).toEqual([
      {
        role: 'assistant',
        parts: [
          { type: 'text', content: 'Done with [REDACTED:KEY].' },
          { type: 'tool_call', id: 'tc_2', name: 'write_file', arguments: { path: 'a.md', content: '[REDACTED:KEY]' } },
        ],
        finish_reason: 'tool_calls',
      },
    ]);
  });

  it('records no content when the redactor cannot tell whose secrets to mask', async () => {
    await traceModelProvider(answering(response), { target: openai, captureContent: () => undefined }).complete(request);
    expect(onlySpan().attributes).not.toHaveProperty('gen_ai.input.messages');
    expect(onlySpan().attributes).not.toHaveProperty('gen_ai.output.messages');
  });
});
