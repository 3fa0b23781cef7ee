import { ModelNotConfiguredError } from './model-provider.errors';
import type { ModelProvider, ModelResponse } from './model-provider.port';

/**
 * Stands in when no usable model is configured, so the service still starts and accepts tasks;
 * each model call then fails with a message that names the variable to set.
 */
export class NotConfiguredModelProvider implements ModelProvider {
  constructor(
    readonly reason: string,
    readonly name = 'not-configured',
  ) {}

  async complete(): Promise<ModelResponse> {
    throw new ModelNotConfiguredError(this.reason);
  }
}
