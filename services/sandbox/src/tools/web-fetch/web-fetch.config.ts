import { intFromEnv, parseAllowHosts } from '@app/common';

/** Limits and exceptions for `web_fetch`; build it with `webFetchConfigFromEnv`. */
export interface WebFetchConfig {
  /** Normalised `host:port` keys (see `allowListKey` in @app/common) that may be fetched even on private addresses. */
  readonly allowHosts: ReadonlySet<string>;
  /** The most body bytes read, counted after decompression. */
  readonly maxBytes: number;
  /** Deadline for the whole fetch: every redirect hop and the body. */
  readonly timeoutMs: number;
  readonly maxRedirects: number;
  /** The most characters of page text handed back to the model. */
  readonly maxOutputChars: number;
}

export const WEB_FETCH_DEFAULTS = {
  maxBytes: 2 * 1024 * 1024,
  timeoutMs: 15_000,
  maxRedirects: 5,
  maxOutputChars: 100_000,
} as const;

/**
 * Reads the `web_fetch` settings; a bad value throws an error naming the variable.
 *
 * - `WEB_FETCH_ALLOW_HOSTS`: comma-separated `host:port` (e.g. `localhost:8080,[::1]:3000,wiki.internal:443`)
 *   that may be fetched although they resolve to loopback, private or other non-public addresses. Default: none.
 * - `WEB_FETCH_MAX_BYTES`: the most body bytes read, after decompression (default 2 MiB).
 * - `WEB_FETCH_TIMEOUT_MS`: deadline for the whole fetch, redirects and body included (default 15000).
 * - `WEB_FETCH_MAX_REDIRECTS`: redirects followed before giving up (default 5).
 * - `WEB_FETCH_MAX_OUTPUT_CHARS`: the most characters of page text returned to the model (default 100000).
 */
export function webFetchConfigFromEnv(env: NodeJS.ProcessEnv): WebFetchConfig {
  return {
    allowHosts: parseAllowHosts(env.WEB_FETCH_ALLOW_HOSTS ?? '', 'WEB_FETCH_ALLOW_HOSTS'),
    maxBytes: intFromEnv(env, 'WEB_FETCH_MAX_BYTES', WEB_FETCH_DEFAULTS.maxBytes, { min: 1 }),
    timeoutMs: intFromEnv(env, 'WEB_FETCH_TIMEOUT_MS', WEB_FETCH_DEFAULTS.timeoutMs, { min: 1 }),
    maxRedirects: intFromEnv(env, 'WEB_FETCH_MAX_REDIRECTS', WEB_FETCH_DEFAULTS.maxRedirects, { min: 0 }),
    maxOutputChars: intFromEnv(env, 'WEB_FETCH_MAX_OUTPUT_CHARS', WEB_FETCH_DEFAULTS.maxOutputChars, { min: 1 }),
  };
}
