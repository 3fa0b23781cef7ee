import { BUILT_IN_MODEL_PRICES, costOfCall, modelPricesFromEnv, priceOf } from './model-prices';

const usage = (inputTokens: number, outputTokens: number, cacheReadTokens = 0, cacheWriteTokens = 0) => ({
  inputTokens,
  outputTokens,
  totalTokens: inputTokens + outputTokens,
  cacheReadTokens,
  cacheWriteTokens,
});

describe('model prices', () => {
  it('prices input and output tokens per million', () => {
    expect(costOfCall({ input: 3, output: 15 }, usage(1_000_000, 100_000))).toBe(4.5);
  });

  it('prices cache reads and writes at their own rates and only the rest of the input at the input rate', () => {
    // 10,000 input of which 6,000 read and 2,000 written: 2,000 × 3 + 6,000 × 0.3 + 2,000 × 3.75 + 1,000 × 15 per million.
    const cost = costOfCall(BUILT_IN_MODEL_PRICES['claude-sonnet-4-5'], usage(10_000, 1_000, 6_000, 2_000));
    expect(cost).toBe(0.0303);
  });

  it('prices cache tokens at the input rate when the entry has no cache rates', () => {
    expect(costOfCall({ input: 2, output: 0 }, usage(1_000_000, 0, 500_000, 500_000))).toBe(2);
  });

  it('finds a dated model id by the longest entry it starts with', () => {
    expect(priceOf(BUILT_IN_MODEL_PRICES, 'claude-sonnet-4-5-20250929')).toBe(BUILT_IN_MODEL_PRICES['claude-sonnet-4-5']);
    expect(priceOf(BUILT_IN_MODEL_PRICES, 'claude-sonnet-4-20250514')).toBe(BUILT_IN_MODEL_PRICES['claude-sonnet-4']);
    expect(priceOf(BUILT_IN_MODEL_PRICES, 'gpt-4o-mini-2024-07-18')).toBe(BUILT_IN_MODEL_PRICES['gpt-4o-mini']);
    expect(priceOf(BUILT_IN_MODEL_PRICES, 'gpt-4o')).toBe(BUILT_IN_MODEL_PRICES['gpt-4o']);
  });

  it('gives a differently priced model that starts with a shorter entry its own entry', () => {
    expect(priceOf(BUILT_IN_MODEL_PRICES, 'claude-opus-4-5-20251101')).toMatchObject({ input: 5, output: 25 });
    expect(priceOf(BUILT_IN_MODEL_PRICES, 'claude-opus-4-1-20250805')).toMatchObject({ input: 15, output: 75 });
    expect(priceOf(BUILT_IN_MODEL_PRICES, 'gpt-4o-2024-05-13')).toEqual({ input: 5, output: 15 });
    expect(priceOf(BUILT_IN_MODEL_PRICES, 'gpt-4o-2024-08-06')).toBe(BUILT_IN_MODEL_PRICES['gpt-4o']);
    expect(priceOf(BUILT_IN_MODEL_PRICES, 'o3-mini-2025-01-31')).toBe(BUILT_IN_MODEL_PRICES['o3-mini']);
    expect(priceOf(BUILT_IN_MODEL_PRICES, 'o3-2025-04-16')).toBe(BUILT_IN_MODEL_PRICES['o3']);
    expect(priceOf(BUILT_IN_MODEL_PRICES, 'gpt-5-pro-2025-10-06')).toBe(BUILT_IN_MODEL_PRICES['gpt-5-pro']);
  });

  it("prices Anthropic's cache writes at the 5-minute rate, 1.25 × input, and reads at 0.1 × input", () => {
    // Claude Haiku 3 is the published exception: 0.30 and 0.03 on an input of 0.25.
    for (const [model, price] of Object.entries(BUILT_IN_MODEL_PRICES)) {
      if (!model.startsWith('claude-') || model === 'claude-3-haiku') continue;
      expect([model, price.cacheWrite]).toEqual([model, expect.closeTo(price.input * 1.25, 9)]);
      expect([model, price.cacheRead]).toEqual([model, expect.closeTo(price.input * 0.1, 9)]);
    }
  });

  it('has no price for a model no entry names or starts (a bare prefix match is not enough)', () => {
    expect(priceOf(BUILT_IN_MODEL_PRICES, 'llama3.1')).toBeUndefined();
    expect(priceOf(BUILT_IN_MODEL_PRICES, 'gpt-4oxyz')).toBeUndefined();
  });

  it('merges MODEL_PRICES over the built-in table', () => {
    const prices = modelPricesFromEnv({
      MODEL_PRICES: '{"gpt-4o": {"input": 1, "output": 2}, "local-model": {"input": 0, "output": 0.5, "cacheRead": 0}}',
    });
    expect(prices['gpt-4o']).toEqual({ input: 1, output: 2 });
    expect(prices['local-model']).toEqual({ input: 0, output: 0.5, cacheRead: 0 });
    expect(prices['claude-sonnet-4-5']).toBe(BUILT_IN_MODEL_PRICES['claude-sonnet-4-5']);
    expect(modelPricesFromEnv({})).toBe(BUILT_IN_MODEL_PRICES);
  });

  it.each([
    ['{not json', /MODEL_PRICES must be JSON/],
    ['[1, 2]', /MODEL_PRICES must be a JSON object/],
    ['{"m": 3}', /MODEL_PRICES\["m"\] must be an object/],
    ['{"m": {"input": 1}}', /MODEL_PRICES\["m"\]\.output must be a number .*required/],
    ['{"m": {"input": -1, "output": 1}}', /MODEL_PRICES\["m"\]\.input must be a number/],
    ['{"m": {"input": "1", "output": 1}}', /MODEL_PRICES\["m"\]\.input must be a number/],
    ['{"m": {"input": 1, "output": 1, "cached": 1}}', /unknown field "cached"/],
  ])('refuses MODEL_PRICES=%s, saying what is wrong', (value, message) => {
    expect(() => modelPricesFromEnv({ MODEL_PRICES: value })).toThrow(message);
  });
});
