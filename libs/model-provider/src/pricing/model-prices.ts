import type { TokenUsage } from '../model-provider.port';

// What a model call cost, from a price table in USD per million tokens (docs/operations/model-providers.md
// "Prices and cost"). The built-in table holds published list prices as of PRICES_AS_OF; MODEL_PRICES
// overrides or adds entries.

export interface ModelPrice {
  /** USD per million input tokens that were neither read from nor written to the prompt cache. */
  readonly input: number;
  readonly output: number;
  /** USD per million cache-read tokens; absent: the input rate. */
  readonly cacheRead?: number;
  /** USD per million cache-write tokens; absent: the input rate. */
  readonly cacheWrite?: number;
}

export type ModelPrices = Readonly<Record<string, ModelPrice>>;

export const PRICES_AS_OF = '2025-11-01';

/** List prices (USD per million tokens) as of PRICES_AS_OF; Anthropic's cache writes at the 5-minute rate. */
export const BUILT_IN_MODEL_PRICES: ModelPrices = {
  'claude-opus-4-1': { input: 15, output: 75, cacheRead: 1.5, cacheWrite: 18.75 },
  'claude-opus-4': { input: 15, output: 75, cacheRead: 1.5, cacheWrite: 18.75 },
  'claude-sonnet-4-5': { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
  'claude-sonnet-4': { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
  'claude-3-7-sonnet': { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
  'claude-haiku-4-5': { input: 1, output: 5, cacheRead: 0.1, cacheWrite: 1.25 },
  'claude-3-5-haiku': { input: 0.8, output: 4, cacheRead: 0.08, cacheWrite: 1 },
  'gpt-4o': { input: 2.5, output: 10, cacheRead: 1.25 },
  'gpt-4o-mini': { input: 0.15, output: 0.6, cacheRead: 0.075 },
  'gpt-4.1': { input: 2, output: 8, cacheRead: 0.5 },
  'gpt-4.1-mini': { input: 0.4, output: 1.6, cacheRead: 0.1 },
  'gpt-4.1-nano': { input: 0.1, output: 0.4, cacheRead: 0.025 },
  'gpt-5': { input: 1.25, output: 10, cacheRead: 0.125 },
  'gpt-5-mini': { input: 0.25, output: 2, cacheRead: 0.025 },
  'gpt-5-nano': { input: 0.05, output: 0.4, cacheRead: 0.005 },
};

export class ModelPricesConfigError extends Error {
  override readonly name = 'ModelPricesConfigError';
}

/** MODEL_PRICES merged over the built-in table; a bad value throws, naming what is wrong (start-up fails). */
export function modelPricesFromEnv(env: NodeJS.ProcessEnv): ModelPrices {
  const raw = env.MODEL_PRICES?.trim();
  if (!raw) return BUILT_IN_MODEL_PRICES;
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch (error) {
    throw new ModelPricesConfigError(`MODEL_PRICES must be JSON ({"<model>": {"input": 3, "output": 15}}): ${(error as Error).message}`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new ModelPricesConfigError(
      'MODEL_PRICES must be a JSON object of model names to prices, e.g. {"my-model": {"input": 3, "output": 15}}',
    );
  }
  const overrides: Record<string, ModelPrice> = {};
  for (const [model, price] of Object.entries(parsed)) overrides[model] = checkPrice(model, price);
  return { ...BUILT_IN_MODEL_PRICES, ...overrides };
}

const PRICE_FIELDS = ['input', 'output', 'cacheRead', 'cacheWrite'] as const;

function checkPrice(model: string, price: unknown): ModelPrice {
  const where = `MODEL_PRICES[${JSON.stringify(model)}]`;
  if (model.trim() === '') throw new ModelPricesConfigError('MODEL_PRICES: a model name must not be empty');
  if (typeof price !== 'object' || price === null || Array.isArray(price)) {
    throw new ModelPricesConfigError(
      `${where} must be an object {"input", "output", "cacheRead"?, "cacheWrite"?} in USD per million tokens`,
    );
  }
  for (const key of Object.keys(price)) {
    if (!(PRICE_FIELDS as readonly string[]).includes(key)) {
      throw new ModelPricesConfigError(`${where} has an unknown field "${key}" (allowed: ${PRICE_FIELDS.join(', ')})`);
    }
  }
  const fields = price as Record<string, unknown>;
  for (const key of PRICE_FIELDS) {
    const value = fields[key];
    const required = key === 'input' || key === 'output';
    if (value === undefined && !required) continue;
    if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
      throw new ModelPricesConfigError(
        `${where}.${key} must be a number of USD per million tokens, 0 or more${required ? ' (required)' : ''}`,
      );
    }
  }
  return fields as unknown as ModelPrice;
}

/**
 * The price of `model`: its own entry, else the longest entry that is a prefix of it followed by
 * `-` (so `claude-sonnet-4-5-20250929` takes `claude-sonnet-4-5`, not `claude-sonnet-4`); else none.
 */
export function priceOf(prices: ModelPrices, model: string): ModelPrice | undefined {
  if (Object.hasOwn(prices, model)) return prices[model];
  let best: string | undefined;
  for (const name of Object.keys(prices)) {
    if (model.startsWith(`${name}-`) && (best === undefined || name.length > best.length)) best = name;
  }
  return best === undefined ? undefined : prices[best];
}

/**
 * USD of one call. inputTokens includes the cache reads and writes, so those are priced at their
 * own rates and only the rest at the input rate. Rounded to 1e-9 USD, so sums stay exact enough.
 */
export function costOfCall(price: ModelPrice, usage: TokenUsage): number {
  const uncached = Math.max(0, usage.inputTokens - usage.cacheReadTokens - usage.cacheWriteTokens);
  const micro =
    uncached * price.input +
    usage.cacheReadTokens * (price.cacheRead ?? price.input) +
    usage.cacheWriteTokens * (price.cacheWrite ?? price.input) +
    usage.outputTokens * price.output;
  return roundUsd(micro / 1_000_000);
}

export const roundUsd = (usd: number): number => Math.round(usd * 1e9) / 1e9;
