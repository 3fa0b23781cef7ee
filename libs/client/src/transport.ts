import type { RetryPolicy } from './backoff';
import { retryDelayMs, sleep } from './backoff';
import { networkError } from './errors';

/** Statuses that say "not now" rather than "no": a gateway or an instance restarting. */
const RETRYABLE_STATUSES = new Set([502, 503, 504]);

export interface TransportOptions {
  readonly baseUrl: string;
  readonly apiKey: string;
  readonly fetch: (request: Request) => Promise<Response>;
  /** Retries of reads (GET, HEAD) that failed without an answer or with 502/503/504. */
  readonly retry: RetryPolicy;
  /** How long to wait for an answer's headers; the body (a stream, a download) is not bounded by it. */
  readonly timeoutMs: number;
}

/**
 * Every request of the client goes through here: the API key, the time bound, and the retries.
 * Only reads are retried: a POST that failed mid-way may have been recorded, and sending it again
 * could create a second task or a second follow-up.
 */
export class Transport {
  constructor(readonly options: TransportOptions) {}

  url(path: string): string {
    return `${this.options.baseUrl.replace(/\/+$/, '')}${path}`;
  }

  /** `retries: 0` for a caller with its own policy (the stream), so that the two do not multiply. */
  async send(request: Request, options: { retries?: number } = {}): Promise<Response> {
    request.headers.set('authorization', `Bearer ${this.options.apiKey}`);
    const retries = request.method === 'GET' || request.method === 'HEAD' ? (options.retries ?? this.options.retry.retries) : 0;
    for (let attempt = 0; ; attempt++) {
      const last = attempt >= retries;
      try {
        const response = await this.attempt(last ? request : request.clone());
        if (last || !RETRYABLE_STATUSES.has(response.status)) return response;
        await response.body?.cancel();
      } catch (error) {
        if (last || request.signal.aborted) throw networkError(error);
      }
      await sleep(retryDelayMs(this.options.retry, attempt + 1), request.signal);
    }
  }

  /** One fetch, aborted when its headers take longer than timeoutMs or when the caller aborts. */
  private async attempt(request: Request): Promise<Response> {
    const timeout = new AbortController();
    const timer = setTimeout(
      () => timeout.abort(new Error(`no answer within ${this.options.timeoutMs} ms (timeoutMs)`)),
      this.options.timeoutMs,
    );
    try {
      return await this.options.fetch(new Request(request, { signal: AbortSignal.any([request.signal, timeout.signal]) }));
    } finally {
      clearTimeout(timer);
    }
  }
}
