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

export const PRICES_AS_OF = '2026-11-28';

/**
 * List prices (USD per million tokens) as of PRICES_AS_OF, each checked against at least two of:
 * - Anthropic: https://platform.claude.com/docs/en/about-claude/pricing (the model table with its
 *   "5m cache writes", "1h cache writes" and "Cache hits and refreshes" columns);
 * - OpenAI: https://developers.openai.com/api/docs/pricing, as quoted by third-party price lists
 *   (deploybase.ai/articles/openai-pricing, benchlm.ai/blog/posts/openai-api-pricing) and OpenAI's
 *   deep-research announcement (community.openai.com/t/deep-research-in-the-api-webhooks-and-web-search-with-o3/1299919);
 * - LiteLLM's machine-readable list: github.com/BerriAI/litellm, model_prices_and_context_window.json
 *   (input_cost_per_token, output_cost_per_token, cache_read_input_token_cost,
 *   cache_creation_input_token_cost; commit 00035b69f416be24e2e323c13198d9b7d2d1bdf9).
 *
 * Anthropic's cache writes are at the 5-minute rate (1.25 × input); a 1-hour write costs 2 × input.
 * The Anthropic adapter marks its breakpoints `cache_control: {type: "ephemeral"}` with no `ttl`,
 * which is the 5-minute cache (libs/model-provider/src/anthropic/messages.request.ts). Cache reads
 * are 0.1 × input. OpenAI bills no cache writes for these models (no cacheWrite: the input rate).
 *
 * Not in the table: long-context surcharges (Sonnet 4 / 4.5 above 200K input tokens: 6 / 22.50),
 * Opus fast mode, batch and priority/flex tiers. Lookup is by longest prefix, so every model whose
 * id starts with an entry's name and a `-` but is priced differently has its own entry
 * (`claude-opus-4-5` vs `claude-opus-4`, `o3-mini` vs `o3`, `gpt-4o-2024-05-13` vs `gpt-4o`, …).
 */
export const BUILT_IN_MODEL_PRICES: ModelPrices = {
  'claude-opus-4-8': { input: 5, output: 25, cacheRead: 0.5, cacheWrite: 6.25 },
  'claude-opus-4-7': { input: 5, output: 25, cacheRead: 0.5, cacheWrite: 6.25 },
  'claude-opus-4-6': { input: 5, output: 25, cacheRead: 0.5, cacheWrite: 6.25 },
  'claude-opus-4-5': { input: 5, output: 25, cacheRead: 0.5, cacheWrite: 6.25 },
  'claude-opus-4-1': { input: 15, output: 75, cacheRead: 1.5, cacheWrite: 18.75 },
  'claude-opus-4': { input: 15, output: 75, cacheRead: 1.5, cacheWrite: 18.75 },
  'claude-sonnet-4-6': { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
  'claude-sonnet-4-5': { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
  'claude-sonnet-4': { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
  'claude-3-7-sonnet': { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
  'claude-haiku-4-5': { input: 1, output: 5, cacheRead: 0.1, cacheWrite: 1.25 },
  'claude-3-5-haiku': { input: 0.8, output: 4, cacheRead: 0.08, cacheWrite: 1 },
  'claude-3-haiku': { input: 0.25, output: 1.25, cacheRead: 0.03, cacheWrite: 0.3 },
  'gpt-4o': { input: 2.5, output: 10, cacheRead: 1.25 },
  'gpt-4o-2024-05-13': { input: 5, output: 15 },
  'gpt-4o-mini': { input: 0.15, output: 0.6, cacheRead: 0.075 },
  'gpt-4.1': { input: 2, output: 8, cacheRead: 0.5 },
  'gpt-4.1-mini': { input: 0.4, output: 1.6, cacheRead: 0.1 },
  'gpt-4.1-nano': { input: 0.1, output: 0.4, cacheRead: 0.025 },
  'gpt-5': { input: 1.25, output: 10, cacheRead: 0.125 },
  'gpt-5-mini': { input: 0.25, output: 2, cacheRead: 0.025 },
  'gpt-5-nano': { input: 0.05, output: 0.4, cacheRead: 0.005 },
  'gpt-5-pro': { input: 15, output: 120 },
  o3: { input: 2, output: 8, cacheRead: 0.5 },
  'o3-mini': { input: 1.1, output: 4.4, cacheRead: 0.55 },
  'o3-pro': { input: 20, output: 80 },
  'o3-deep-research': { input: 10, output: 40, cacheRead: 2.5 },
  'o4-mini': { input: 1.1, output: 4.4, cacheRead: 0.275 },
  'o4-mini-deep-research': { input: 2, output: 8, cacheRead: 0.5 },
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
