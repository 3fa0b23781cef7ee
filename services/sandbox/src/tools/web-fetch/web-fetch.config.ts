import { intFromEnv } from '@app/common';

/** Limits and exceptions for `web_fetch`; build it with `webFetchConfigFromEnv`. */
export interface WebFetchConfig {
  /** Normalised `host:port` keys (see `allowListKey`) that may be fetched even on private addresses. */
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
    allowHosts: parseAllowHosts(env.WEB_FETCH_ALLOW_HOSTS ?? ''),
    maxBytes: intFromEnv(env, 'WEB_FETCH_MAX_BYTES', WEB_FETCH_DEFAULTS.maxBytes, { min: 1 }),
    timeoutMs: intFromEnv(env, 'WEB_FETCH_TIMEOUT_MS', WEB_FETCH_DEFAULTS.timeoutMs, { min: 1 }),
    maxRedirects: intFromEnv(env, 'WEB_FETCH_MAX_REDIRECTS', WEB_FETCH_DEFAULTS.maxRedirects, { min: 0 }),
    maxOutputChars: intFromEnv(env, 'WEB_FETCH_MAX_OUTPUT_CHARS', WEB_FETCH_DEFAULTS.maxOutputChars, { min: 1 }),
  };
}

// A bracketed IPv6 literal or a name/IPv4 without URL punctuation; the port comes after the last colon.
const ENTRY = /^(\[[0-9A-Fa-f:.]+\]|[^\s/\\@?#:[\]]+):(\d{1,5})$/;

/** `variable` names the setting in error messages (MCP_ALLOW_HOSTS reads the same format). */
export function parseAllowHosts(raw: string, variable = 'WEB_FETCH_ALLOW_HOSTS'): ReadonlySet<string> {
  const keys = new Set<string>();
  for (const entry of raw
    .split(',')
    .map((e) => e.trim())
    .filter((e) => e !== '')) {
    const match = ENTRY.exec(entry);
    if (!match) throw new Error(`${variable} entry "${entry}" must be host:port, e.g. localhost:8080 or [::1]:8080`);
    const port = Number(match[2]);
    if (port < 1 || port > 65535) throw new Error(`${variable} entry "${entry}" has port ${match[2]}, outside 1-65535`);
    keys.add(`${normaliseHost(match[1], entry, variable)}:${port}`);
  }
  return keys;
}

/** The allow-list key of a URL: its host as the URL parser normalises it, and its port, defaulted from the scheme. */
export function allowListKey(url: URL): string {
  return `${url.hostname}:${url.port || (url.protocol === 'https:' ? 443 : 80)}`;
}

// Goes through the same URL parser as fetched URLs, so `LOCALHOST`, `127.1` and `[0::1]` match what a URL says.
function normaliseHost(host: string, entry: string, variable: string): string {
  try {
    return new URL(`http://${host}/`).hostname;
  } catch {
    throw new Error(`${variable} entry "${entry}" does not name a valid host`);
  }
}
