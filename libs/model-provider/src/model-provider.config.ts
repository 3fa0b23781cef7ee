import type { ModelProvider } from './model-provider.port';
import { AnthropicMessagesProvider } from './anthropic/anthropic-messages.provider';
import { NotConfiguredModelProvider } from './not-configured.provider';
import { OpenAiChatProvider } from './openai-compatible/openai-chat.provider';
import { safeUrl } from './http/safe-url';

// Reads the LLM_* variables of docs/operations/configuration.md. A missing or broken configuration never stops the
// service from starting: it yields a provider whose calls fail with a message naming the fix.

export const LLM_PROVIDERS = ['openai-compatible', 'openai', 'anthropic', 'ollama'] as const;
export type LlmProviderKind = (typeof LLM_PROVIDERS)[number];

const DEFAULT_BASE_URLS: Partial<Record<LlmProviderKind, string>> = {
  openai: 'https://api.openai.com/v1',
  ollama: 'http://127.0.0.1:11434/v1',
  anthropic: 'https://api.anthropic.com',
};

const BASE_URL_HINT = 'LLM_BASE_URL (an OpenAI-compatible chat-completions endpoint, e.g. http://127.0.0.1:11434/v1)';

const MODEL_HINTS: Record<LlmProviderKind, string> = {
  'openai-compatible': 'LLM_MODEL (the model name to request from LLM_BASE_URL)',
  openai: 'LLM_MODEL (an OpenAI model name, e.g. gpt-4o-mini)',
  ollama: 'LLM_MODEL (a model pulled into Ollama, e.g. llama3.1)',
  anthropic: 'LLM_MODEL (an Anthropic model name, e.g. claude-sonnet-4-5)',
};

export type ModelConfig =
  | {
      readonly status: 'ready';
      readonly provider: LlmProviderKind;
      /** The variable that decided the provider, for start-up logs. */
      readonly chosenBy: 'LLM_PROVIDER' | 'LLM_BASE_URL' | 'LLM_API_KEY';
      readonly baseUrl: string;
      readonly apiKey?: string;
      readonly model: string;
      readonly stream: boolean;
      readonly timeoutMs: number;
      readonly maxRetries: number;
      /** Anthropic only: the `max_tokens` of each request (LLM_MAX_TOKENS). */
      readonly maxTokens: number;
    }
  | { readonly status: 'unavailable'; readonly provider?: LlmProviderKind; readonly reason: string };

export function createModelProviderFromEnv(env: NodeJS.ProcessEnv): ModelProvider {
  const config = resolveModelConfig(env);
  if (config.status === 'unavailable') return new NotConfiguredModelProvider(config.reason, config.provider);
  const { provider, baseUrl, apiKey, model, stream, timeoutMs, maxRetries, maxTokens } = config;
  if (provider === 'anthropic') {
    return new AnthropicMessagesProvider({ baseUrl, apiKey: apiKey!, model, maxTokens, stream, timeoutMs, maxRetries });
  }
  return new OpenAiChatProvider({ name: provider, baseUrl, apiKey, model, stream, timeoutMs, maxRetries });
}

/** One secret-free line for start-up logs: no API key, no credentials or query in the URL. */
export function describeModelConfig(env: NodeJS.ProcessEnv): string {
  const config = resolveModelConfig(env);
  if (config.status === 'unavailable') return `model provider: not configured. ${config.reason}`;
  return [
    `model provider: ${config.provider} (chosen by ${config.chosenBy})`,
    `model "${config.model}" at ${safeUrl(config.baseUrl)}`,
    config.stream ? 'streaming' : 'not streaming',
    `timeout ${config.timeoutMs} ms per attempt`,
    `up to ${config.maxRetries} retries`,
    ...(config.provider === 'anthropic' ? [`max_tokens ${config.maxTokens}`] : []),
    config.apiKey ? 'API key set' : 'no API key',
  ].join(', ');
}

export function resolveModelConfig(env: NodeJS.ProcessEnv): ModelConfig {
  const explicit = read(env, 'LLM_PROVIDER')?.toLowerCase();
  const baseUrl = read(env, 'LLM_BASE_URL');
  const apiKey = read(env, 'LLM_API_KEY');
  const model = read(env, 'LLM_MODEL');

  if (explicit !== undefined && !isProviderKind(explicit)) {
    return unavailable(
      `Model configuration is invalid: LLM_PROVIDER is ${JSON.stringify(explicit.slice(0, 40))}; set it to one of ${LLM_PROVIDERS.join(', ')}, or unset it to choose from LLM_BASE_URL / LLM_API_KEY.`,
    );
  }
  // docs/operations/configuration.md, LLM_PROVIDER: "chosen from what is set" — an endpoint wins over a bare key.
  const provider = explicit ?? (baseUrl ? 'openai-compatible' : apiKey ? 'openai' : undefined);
  if (provider === undefined) {
    return unavailable(
      model
        ? `No model is configured: set ${BASE_URL_HINT}, or LLM_API_KEY for OpenAI.`
        : `No model is configured: set LLM_MODEL and ${BASE_URL_HINT}, or LLM_API_KEY and LLM_MODEL for OpenAI.`,
    );
  }
  const missing: string[] = [];
  if (provider === 'openai-compatible' && !baseUrl) missing.push(BASE_URL_HINT);
  if (provider === 'openai' && !apiKey) missing.push('LLM_API_KEY (your OpenAI API key)');
  if (provider === 'anthropic' && !apiKey) missing.push('LLM_API_KEY (your Anthropic API key, sent as x-api-key)');
  if (!model) missing.push(MODEL_HINTS[provider]);
  if (missing.length > 0) return unavailable(`No model is configured: set ${missing.join(' and ')}.`, provider);

  const problems: string[] = [];
  const resolvedBaseUrl = normalizeBaseUrl(baseUrl ?? DEFAULT_BASE_URLS[provider]!, provider, problems);
  const stream = parseBoolean(env, 'LLM_STREAM', true, problems);
  const timeoutMs = parseInteger(env, 'LLM_TIMEOUT_MS', 120_000, 1, problems);
  const maxRetries = parseInteger(env, 'LLM_MAX_RETRIES', 4, 0, problems);
  const maxTokens = parseInteger(env, 'LLM_MAX_TOKENS', 8192, 1, problems);
  if (problems.length > 0) return unavailable(`Model configuration is invalid: ${problems.join('; ')}.`, provider);

  return {
    status: 'ready',
    provider,
    chosenBy: explicit ? 'LLM_PROVIDER' : baseUrl ? 'LLM_BASE_URL' : 'LLM_API_KEY',
    baseUrl: resolvedBaseUrl,
    apiKey,
    model: model!,
    stream,
    timeoutMs,
    maxRetries,
    maxTokens,
  };
}

function unavailable(reason: string, provider?: LlmProviderKind): ModelConfig {
  return { status: 'unavailable', provider, reason };
}

function isProviderKind(value: string): value is LlmProviderKind {
  return (LLM_PROVIDERS as readonly string[]).includes(value);
}

/** Blank counts as unset: compose files often pass `LLM_API_KEY=` through. */
function read(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const value = env[name]?.trim();
  return value ? value : undefined;
}

// The parsers below return a usable value and record what is wrong in `problems`.

/**
 * Without a trailing slash; a pasted full `/chat/completions` URL is cut back to its base. For
 * Anthropic the base is the origin (the adapter appends `/v1/messages`), so a pasted
 * `…/v1/messages` or `…/v1` is cut back to it.
 */
function normalizeBaseUrl(url: string, provider: LlmProviderKind, problems: string[]): string {
  const withoutSlash = url.replace(/\/+$/, '');
  const trimmed =
    provider === 'anthropic' ? withoutSlash.replace(/\/v1(\/messages)?$/, '') : withoutSlash.replace(/\/chat\/completions$/, '');
  try {
    const { protocol } = new URL(trimmed);
    if (protocol === 'http:' || protocol === 'https:') return trimmed;
  } catch {
    // reported below; the value itself is not echoed, it may hold credentials
  }
  problems.push('LLM_BASE_URL must be an http(s) URL');
  return trimmed;
}

function parseBoolean(env: NodeJS.ProcessEnv, name: string, fallback: boolean, problems: string[]): boolean {
  const value = read(env, name)?.toLowerCase();
  if (value === undefined) return fallback;
  if (['true', '1', 'yes', 'on'].includes(value)) return true;
  if (['false', '0', 'no', 'off'].includes(value)) return false;
  problems.push(`${name} must be true or false`);
  return fallback;
}

function parseInteger(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, problems: string[]): number {
  const value = read(env, name);
  if (value === undefined) return fallback;
  if (/^\d+$/.test(value) && Number(value) >= min) return Number(value);
  problems.push(`${name} must be a whole number${min > 0 ? ` of at least ${min}` : ''} (got ${JSON.stringify(value.slice(0, 20))})`);
  return fallback;
}
