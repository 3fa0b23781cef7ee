import { intFromEnv, parseAllowHosts } from '@app/common';
import type { RetryPolicy } from './retry-schedule';
import { parseWebhookSecret } from './webhook-secret';

/**
 * Sockets per receiver (scheme, host and port). A burst (many tasks finishing at once) reuses a
 * few kept-alive, pipelined sockets instead of opening one per message: a fraction of the CPU per
 * message on both ends (BENCHMARKS.md, benchmark 8), and no receiver is hit with a hundred
 * connections at once.
 */
export const DEFAULT_MAX_CONNECTIONS = 4;

/** The webhook settings (docs/api.md "Webhooks"); a bad value throws an error naming the variable. */
export class WebhookConfig implements RetryPolicy {
  /** WEBHOOK_URL: where messages of tasks created without `webhookUrl` go; undefined: nowhere. */
  readonly defaultUrl?: URL;
  /** WEBHOOK_TIMEOUT_MS: the most one attempt may take, connecting and reading the answer included. */
  readonly timeoutMs: number;
  readonly retryBaseMs: number;
  readonly maxAttempts: number;
  /** WEBHOOK_ALLOW_HOSTS: `host:port` keys that may be called although they are private or loopback. */
  readonly allowHosts: ReadonlySet<string>;
  /** WEBHOOK_MAX_CONNECTIONS: the most sockets open to one receiver (scheme, host and port) at a time. */
  readonly maxConnections: number;
  // WEBHOOK_SECRET's key. Not a public field, so that logging or serialising the config cannot show it.
  readonly #signingKey?: Buffer;

  constructor(env: NodeJS.ProcessEnv) {
    const secret = env.WEBHOOK_SECRET?.trim();
    if (secret) this.#signingKey = parseWebhookSecret(secret, 'WEBHOOK_SECRET');
    const url = env.WEBHOOK_URL?.trim();
    if (url) {
      if (!secret) throw new Error('WEBHOOK_URL is set but WEBHOOK_SECRET is not: webhooks are always signed, so set both');
      this.defaultUrl = webhookUrlFromEnv(url);
    }
    this.timeoutMs = intFromEnv(env, 'WEBHOOK_TIMEOUT_MS', 10_000, { min: 1 });
    this.retryBaseMs = intFromEnv(env, 'WEBHOOK_RETRY_BASE_MS', 1_000, { min: 1 });
    this.maxAttempts = intFromEnv(env, 'WEBHOOK_MAX_ATTEMPTS', 8, { min: 1 });
    this.allowHosts = parseAllowHosts(env.WEBHOOK_ALLOW_HOSTS ?? '', 'WEBHOOK_ALLOW_HOSTS');
    this.maxConnections = intFromEnv(env, 'WEBHOOK_MAX_CONNECTIONS', DEFAULT_MAX_CONNECTIONS, { min: 1 });
  }

  /** The key messages are signed with; undefined when WEBHOOK_SECRET is unset (then no webhook may be sent). */
  get signingKey(): Buffer | undefined {
    return this.#signingKey;
  }
}

function webhookUrlFromEnv(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new Error('WEBHOOK_URL is not a valid URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('WEBHOOK_URL must be an http or https URL');
  // Credentials in the URL would be sent along and shown wherever the URL is; the signature authenticates us.
  if (url.username !== '' || url.password !== '') throw new Error('WEBHOOK_URL must not contain credentials (user:password@)');
  return url;
}
