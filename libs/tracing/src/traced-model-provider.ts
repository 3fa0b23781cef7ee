import { SpanKind } from '@opentelemetry/api';
import type { ModelProvider, ModelRequest, ModelResponse } from '@app/model-provider';
import { ATTR, inSpan } from './spans';

/**
 * The model provider with a `model.call` span per completion: the provider, the model that
 * answered and the tokens, never the conversation or the answer's text.
 */
export function traceModelProvider(provider: ModelProvider): ModelProvider {
  return {
    name: provider.name,
    complete: (request: ModelRequest): Promise<ModelResponse> =>
      inSpan('model.call', { kind: SpanKind.CLIENT, attributes: { [ATTR.modelProvider]: provider.name } }, async (span) => {
        const response = await provider.complete(request);
        span.setAttributes({
          [ATTR.model]: response.model,
          [ATTR.inputTokens]: response.usage.inputTokens,
          [ATTR.outputTokens]: response.usage.outputTokens,
        });
        return response;
      }),
  };
}
