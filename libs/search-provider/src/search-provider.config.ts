import { intFromEnv } from '@app/common';
import { BRAVE_DEFAULT_URL, BraveProvider } from './brave/brave.provider';
import type { SearchProvider } from './search-provider.port';
import { SearxngProvider } from './searxng/searxng.provider';
import { TAVILY_DEFAULT_URL, TavilyProvider } from './tavily/tavily.provider';

export const SEARCH_PROVIDERS = ['searxng', 'brave', 'tavily'] as const;
export type SearchProviderKind = (typeof SEARCH_PROVIDERS)[number];

/** The most results one search may return, whatever is configured: what Brave and Tavily allow. */
export const SEARCH_RESULTS_CAP = 20;

export interface SearchConfig {
  readonly provider: SearchProviderKind;
  readonly endpoint: URL;
  readonly apiKey?: string;
  /** Results per search when the model does not ask for fewer. */
  readonly maxResults: number;
  readonly timeoutMs: number;
}

/**
 * Reads the web search settings; `undefined` when `SEARCH_PROVIDER` is unset (no `web_search`
 * tool). A chosen provider without what it needs throws an error naming the variable.
 *
 * - `SEARCH_PROVIDER`: `searxng` (needs `SEARXNG_URL`, the instance's root URL), `brave` (needs
 *   `BRAVE_API_KEY`) or `tavily` (needs `TAVILY_API_KEY`).
 * - `BRAVE_API_URL`, `TAVILY_API_URL`: the endpoints, for a proxy or a compatible service.
 * - `WEB_SEARCH_MAX_RESULTS`: results per search, 1-20 (default 10).
 * - `WEB_SEARCH_TIMEOUT_MS`: time one search may take (default 10000).
 */
export function searchConfigFromEnv(env: NodeJS.ProcessEnv): SearchConfig | undefined {
  const chosen = read(env, 'SEARCH_PROVIDER')?.toLowerCase();
  if (chosen === undefined) return undefined;
  if (!isProviderKind(chosen)) {
    throw new Error(
      `SEARCH_PROVIDER is ${JSON.stringify(chosen.slice(0, 40))}; set it to one of ${SEARCH_PROVIDERS.join(', ')}, or unset it to offer no web_search tool`,
    );
  }
  const maxResults = intFromEnv(env, 'WEB_SEARCH_MAX_RESULTS', 10, { min: 1 });
  if (maxResults > SEARCH_RESULTS_CAP) throw new Error(`WEB_SEARCH_MAX_RESULTS must be at most ${SEARCH_RESULTS_CAP}, got ${maxResults}`);
  const timeoutMs = intFromEnv(env, 'WEB_SEARCH_TIMEOUT_MS', 10_000, { min: 1 });
  switch (chosen) {
    case 'searxng':
      return {
        provider: chosen,
        endpoint: httpUrl(
          env,
          'SEARXNG_URL',
          undefined,
          'the root URL of a SearXNG instance with the JSON format enabled, e.g. http://127.0.0.1:8888',
        ),
        maxResults,
        timeoutMs,
      };
    case 'brave':
      return {
        provider: chosen,
        endpoint: httpUrl(env, 'BRAVE_API_URL', BRAVE_DEFAULT_URL),
        apiKey: required(env, 'BRAVE_API_KEY', 'a Brave Search API subscription token'),
        maxResults,
        timeoutMs,
      };
    case 'tavily':
      return {
        provider: chosen,
        endpoint: httpUrl(env, 'TAVILY_API_URL', TAVILY_DEFAULT_URL),
        apiKey: required(env, 'TAVILY_API_KEY', 'a Tavily API key (tvly-…)'),
        maxResults,
        timeoutMs,
      };
  }
}

export function createSearchProvider(config: SearchConfig): SearchProvider {
  switch (config.provider) {
    case 'searxng':
      return new SearxngProvider(config.endpoint, config.timeoutMs);
    case 'brave':
      return new BraveProvider(config.endpoint, config.apiKey ?? '', config.timeoutMs);
    case 'tavily':
      return new TavilyProvider(config.endpoint, config.apiKey ?? '', config.timeoutMs);
  }
}

/** One secret-free line for start-up logs. */
export function describeSearchConfig(config: SearchConfig | undefined): string {
  if (!config) return 'web_search: off (SEARCH_PROVIDER is unset)';
  const { provider, endpoint, maxResults, timeoutMs, apiKey } = config;
  const key = provider === 'searxng' ? '' : apiKey ? ', API key set' : '';
  return `web_search: ${provider} at ${endpoint.origin}${endpoint.pathname.replace(/\/+$/, '')}, up to ${maxResults} results, ${timeoutMs} ms per search${key}`;
}

function read(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const value = env[name]?.trim();
  return value ? value : undefined;
}

function required(env: NodeJS.ProcessEnv, name: string, what: string): string {
  const value = read(env, name);
  if (value === undefined) throw new Error(`SEARCH_PROVIDER is ${env.SEARCH_PROVIDER?.trim()} but ${name} is unset; set it to ${what}`);
  return value;
}

function httpUrl(env: NodeJS.ProcessEnv, name: string, fallback: string | undefined, what = 'an http(s) URL'): URL {
  const raw = read(env, name) ?? fallback;
  if (raw === undefined) throw new Error(`SEARCH_PROVIDER is ${env.SEARCH_PROVIDER?.trim()} but ${name} is unset; set it to ${what}`);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new Error(`${name} is not a valid URL; set it to ${what}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new Error(`${name} must be an http:// or https:// URL, got ${url.protocol}`);
  if (url.username || url.password) throw new Error(`${name} must not carry credentials in the URL`);
  return url;
}

function isProviderKind(value: string): value is SearchProviderKind {
  return (SEARCH_PROVIDERS as readonly string[]).includes(value);
}
