import { dataDirFromEnv, intFromEnv } from '@app/common';

/** The API's settings (docs/operations/configuration.md lists each). */
export class ApiConfig {
  readonly port: number;
  readonly dataDir: string;
  readonly uploadMaxBytes: number;
  readonly uploadMaxFiles: number;
  readonly sseKeepAliveMs: number;
  readonly listMaxLimit = 100;
  /** TASK_MAX_TOKENS: the token budget of a task created without `maxTokens`; undefined: unlimited. */
  readonly taskMaxTokens?: number;
  /** TASK_MAX_TOKENS_CAP: the largest `maxTokens` a create or follow-up may ask for; undefined: no cap. */
  readonly taskMaxTokensCap?: number;
  /** TASK_MAX_COST_USD: the cost budget (USD) of a task created without `maxCostUsd`; undefined: unlimited. */
  readonly taskMaxCostUsd?: number;
  /** Creates + follow-ups per tenant per window, across every API instance; undefined: unlimited. */
  readonly rateLimitPerMinute?: number;
  /** The rate limit's window: a minute. Tests shorten it (RATE_LIMIT_WINDOW_MS, not for production). */
  readonly rateLimitWindowMs: number;
  /** A request whose headers have not all arrived this long after it began is answered 408. */
  readonly httpHeadersTimeoutMs: number;
  /** A request not wholly received (headers and body) this long after it began is answered 408; 0: no bound. */
  readonly httpRequestTimeoutMs: number;

  constructor(env: NodeJS.ProcessEnv) {
    this.port = intFromEnv(env, 'PORT', 3000);
    this.dataDir = dataDirFromEnv(env);
    this.uploadMaxBytes = intFromEnv(env, 'UPLOAD_MAX_BYTES', 104_857_600, { min: 1 });
    this.uploadMaxFiles = intFromEnv(env, 'UPLOAD_MAX_FILES', 100, { min: 1 });
    this.sseKeepAliveMs = intFromEnv(env, 'SSE_KEEPALIVE_MS', 15_000, { min: 10 });
    const cap = intFromEnv(env, 'TASK_MAX_TOKENS_CAP', 0, { min: 1 });
    if (cap > 0) this.taskMaxTokensCap = cap;
    const maxTokens = intFromEnv(env, 'TASK_MAX_TOKENS', 0, { min: 1 });
    if (cap > 0 && maxTokens > cap) throw new Error(`TASK_MAX_TOKENS (${maxTokens}) must not exceed TASK_MAX_TOKENS_CAP (${cap})`);
    // Under a cap, a task created without a budget gets the cap: none would be more than the operator allows.
    if (maxTokens > 0 || cap > 0) this.taskMaxTokens = maxTokens > 0 ? maxTokens : cap;
    this.taskMaxCostUsd = positiveUsdFromEnv(env, 'TASK_MAX_COST_USD');
    const rate = intFromEnv(env, 'RATE_LIMIT_PER_MINUTE', 0, { min: 1 });
    if (rate > 0) this.rateLimitPerMinute = rate;
    this.rateLimitWindowMs = intFromEnv(env, 'RATE_LIMIT_WINDOW_MS', 60_000, { min: 600 });
    this.httpHeadersTimeoutMs = intFromEnv(env, 'HTTP_HEADERS_TIMEOUT_MS', 60_000, { min: 1 });
    this.httpRequestTimeoutMs = intFromEnv(env, 'HTTP_REQUEST_TIMEOUT_MS', 300_000, { min: 0 });
    // Node refuses to start a server whose headers may take longer than the whole request.
    if (this.httpRequestTimeoutMs > 0 && this.httpHeadersTimeoutMs > this.httpRequestTimeoutMs) {
      throw new Error(
        `HTTP_HEADERS_TIMEOUT_MS (${this.httpHeadersTimeoutMs}) must not exceed HTTP_REQUEST_TIMEOUT_MS (${this.httpRequestTimeoutMs})`,
      );
    }
  }
}

function positiveUsdFromEnv(env: NodeJS.ProcessEnv, name: string): number | undefined {
  const raw = env[name]?.trim();
  if (raw === undefined || raw === '') return undefined;
  const usd = Number(raw);
  if (!Number.isFinite(usd) || usd <= 0) throw new Error(`${name} must be a positive number of USD, got "${raw}"`);
  return usd;
}
