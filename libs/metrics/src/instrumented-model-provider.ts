import type { ModelProvider, ModelRequest, ModelResponse } from '@app/model-provider';
import type { ServiceMetrics } from './service-metrics';
import { secondsSince } from './service-metrics';

/** Whom the calls go to, as the GenAI conventions name it (libs/tracing genAiTargetFromEnv). */
export interface ModelCallTarget {
  readonly providerName: string;
  readonly requestModel?: string;
}

/**
 * The model provider with each completion timed and its tokens counted: in our own metrics, by
 * the model that answered (a failed call is labelled with the provider's name: no model answered
 * it), and in the OpenTelemetry GenAI client metrics, with the conventions' attributes.
 */
export function instrumentModelProvider(provider: ModelProvider, metrics: ServiceMetrics, target: ModelCallTarget): ModelProvider {
  const common = {
    gen_ai_operation_name: 'chat',
    gen_ai_provider_name: target.providerName,
    ...(target.requestModel ? { gen_ai_request_model: target.requestModel } : {}),
  };
  return {
    name: provider.name,
    complete: async (request: ModelRequest): Promise<ModelResponse> => {
      const startedAt = performance.now();
      let response: ModelResponse;
      try {
        response = await provider.complete(request);
      } catch (error) {
        const seconds = secondsSince(startedAt);
        metrics.modelCallDuration.observe({ model: provider.name, outcome: 'error' }, seconds);
        metrics.genAiOperationDuration.observe({ ...common, error_type: error instanceof Error ? error.name : '_OTHER' }, seconds);
        throw error;
      }
      const seconds = secondsSince(startedAt);
      const model = response.model;
      metrics.modelCallDuration.observe({ model, outcome: 'ok' }, seconds);
      metrics.modelTokens.inc({ model, direction: 'in' }, response.usage.inputTokens);
      metrics.modelTokens.inc({ model, direction: 'out' }, response.usage.outputTokens);
      const answered = { ...common, ...(model ? { gen_ai_response_model: model } : {}) };
      metrics.genAiOperationDuration.observe(answered, seconds);
      metrics.genAiTokenUsage.observe({ ...answered, gen_ai_token_type: 'input' }, response.usage.inputTokens);
      metrics.genAiTokenUsage.observe({ ...answered, gen_ai_token_type: 'output' }, response.usage.outputTokens);
      return response;
    },
  };
}
