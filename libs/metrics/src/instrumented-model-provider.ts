import type { ModelProvider, ModelRequest, ModelResponse } from '@app/model-provider';
import type { ServiceMetrics } from './service-metrics';
import { secondsSince } from './service-metrics';

/**
 * The model provider with each completion timed and its tokens counted, by the model that
 * answered (a failed call is labelled with the provider's name: no model answered it).
 */
export function instrumentModelProvider(provider: ModelProvider, metrics: ServiceMetrics): ModelProvider {
  return {
    name: provider.name,
    complete: async (request: ModelRequest): Promise<ModelResponse> => {
      const startedAt = performance.now();
      let response: ModelResponse;
      try {
        response = await provider.complete(request);
      } catch (error) {
        metrics.modelCallDuration.observe({ model: provider.name, outcome: 'error' }, secondsSince(startedAt));
        throw error;
      }
      const model = response.model;
      metrics.modelCallDuration.observe({ model, outcome: 'ok' }, secondsSince(startedAt));
      metrics.modelTokens.inc({ model, direction: 'in' }, response.usage.inputTokens);
      metrics.modelTokens.inc({ model, direction: 'out' }, response.usage.outputTokens);
      return response;
    },
  };
}
