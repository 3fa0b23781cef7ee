import { BUILT_IN_MODEL_PRICES } from '@app/model-provider';
import { agentLoopConfigFromEnv } from './agent-loop.config';

describe('agentLoopConfigFromEnv: prices', () => {
  it('prices calls from the built-in table, MODEL_PRICES merged over it, and knows the configured model', () => {
    expect(agentLoopConfigFromEnv({}).modelPrices).toBe(BUILT_IN_MODEL_PRICES);
    const config = agentLoopConfigFromEnv({ MODEL_PRICES: '{"local": {"input": 0, "output": 0}}', LLM_MODEL: 'local' });
    expect(config.modelPrices.local).toEqual({ input: 0, output: 0 });
    expect(config.configuredModel).toBe('local');
  });

  it('stops the start with a bad MODEL_PRICES, naming what is wrong', () => {
    expect(() => agentLoopConfigFromEnv({ MODEL_PRICES: '{"gpt-4o": {"input": 2.5}}' })).toThrow(
      'MODEL_PRICES["gpt-4o"].output must be a number of USD per million tokens, 0 or more (required)',
    );
  });
});
