import { Readable } from 'node:stream';
import type { PromHistogramData } from 'prom2javascript';
import { getMetricsFromStream } from 'prom2javascript';
import type { ModelProvider, ModelResponse } from '@app/model-provider';
import { ModelProviderError } from '@app/model-provider';
import { instrumentModelProvider } from './instrumented-model-provider';
import { ServiceMetrics } from './service-metrics';

const parse = async (metrics: ServiceMetrics) => getMetricsFromStream(Readable.from([(await metrics.exposition()).body]));

const response: ModelResponse = {
  text: 'Done.',
  toolCalls: [],
  usage: { inputTokens: 100, outputTokens: 20, totalTokens: 120, cacheReadTokens: 0, cacheWriteTokens: 0 },
  model: 'gpt-4o-2024-08-06',
  finishReason: 'stop',
};
const answering = (answer: ModelResponse | Error): ModelProvider => ({
  name: 'openai',
  complete: async () => {
    if (answer instanceof Error) throw answer;
    return answer;
  },
});
const target = { providerName: 'openai', requestModel: 'gpt-4o' };
const chat = { gen_ai_operation_name: 'chat', gen_ai_provider_name: 'openai', gen_ai_request_model: 'gpt-4o' };

describe('instrumentModelProvider', () => {
  it('records gen_ai.client.token.usage per token type and gen_ai.client.operation.duration, under their Prometheus names', async () => {
    const metrics = new ServiceMetrics();
    const provider = instrumentModelProvider(answering(response), metrics, target);
    await provider.complete({ messages: [], tools: [] });
    await provider.complete({ messages: [], tools: [] });
    const parsed = await parse(metrics);
    const answered = { ...chat, gen_ai_response_model: 'gpt-4o-2024-08-06' };
    const usage = parsed.gen_ai_client_token_usage.data as PromHistogramData[];
    expect(usage).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ labels: { ...answered, gen_ai_token_type: 'input' }, count: 2, sum: 200 }),
        expect.objectContaining({ labels: { ...answered, gen_ai_token_type: 'output' }, count: 2, sum: 40 }),
      ]),
    );
    // The conventions' advised boundaries: 100 tokens fall in the 256 bucket, not the 64 one.
    const input = usage.find((s) => s.labels.gen_ai_token_type === 'input')!;
    expect([input.buckets['64'], input.buckets['256']]).toEqual([0, 2]);
    const [duration] = parsed.gen_ai_client_operation_duration_seconds.data as PromHistogramData[];
    expect(duration).toMatchObject({ labels: answered, count: 2 });
    expect(Object.keys(duration.buckets)).toContain('81.92');
  });

  it("times a failed call with its error's class as error_type, and counts no tokens", async () => {
    const metrics = new ServiceMetrics();
    const provider = instrumentModelProvider(answering(new ModelProviderError('down', true)), metrics, target);
    await expect(provider.complete({ messages: [], tools: [] })).rejects.toThrow('down');
    const parsed = await parse(metrics);
    expect(parsed.gen_ai_client_operation_duration_seconds.data).toEqual([
      expect.objectContaining({ labels: { ...chat, error_type: 'ModelProviderError' }, count: 1 }),
    ]);
    expect(parsed.gen_ai_client_token_usage.data).toEqual([]);
  });
});
