import { STATUS_CODES } from 'node:http';
import type * as Undici from 'undici';
import { ModelCallAbortedError, ModelProviderError } from '../model-provider.errors';
import { AttemptFailure } from './attempt-failure';
import type { AnswerHead } from './model-exchange';
import { AnswerTooLargeError, ModelExchange } from './model-exchange';
import { backoffDelayMs, retryAfterMs, sleep } from './retry.policy';

export interface ModelHttpClientOptions {
  /** The full endpoint, e.g. `https://api.anthropic.com/v1/messages`. */
  readonly endpoint: string;
  /** Limit of one attempt, the whole streamed body included. */
  readonly timeoutMs: number;
  /** Retries after the first attempt on retryable failures. */
  readonly maxRetries: number;
  /** First backoff delay, doubled on each retry. */
  readonly retryBaseDelayMs: number;
  /** Longest wait between attempts, a server's Retry-After included. */
  readonly maxRetryDelayMs: number;
  /** Starts every error message: which provider, model and (credential-free) URL. */
  readonly label: string;
  /** Never shown in an error message, even when a server quotes it back. */
  readonly secret?: string;
}

/** Reads one successful answer (2xx), or throws an AttemptFailure saying why it is unusable. */
export type AnswerReader<T> = (exchange: ModelExchange, head: AnswerHead) => Promise<T>;

/**
 * The protocol-free half of a model adapter: one POST per attempt over undici's `dispatch`
 * (model-exchange.ts, cheaper than `fetch` or `request()`: BENCHMARKS.md "Webhooks"), the
 * attempt's deadline, retries with backoff honouring Retry-After, and errors with the secret
 * redacted. Each protocol (chat-completions, Anthropic Messages) brings its body and reader.
 * Redirects are not followed: a base URL that redirects is reported.
 */
export class ModelHttpClient {
  private readonly origin: string;
  private readonly path: string;
  private agent?: Promise<Undici.Agent>;

  constructor(private readonly options: ModelHttpClientOptions) {
    const endpoint = new URL(options.endpoint);
    this.origin = endpoint.origin;
    this.path = `${endpoint.pathname}${endpoint.search}`;
  }

  async call<T>(body: string, headers: Record<string, string>, signal: AbortSignal | undefined, read: AnswerReader<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      if (signal?.aborted) throw aborted(signal);
      try {
        return await this.attempt(body, headers, signal, read);
      } catch (error) {
        if (signal?.aborted) throw aborted(signal);
        const failure = error as AttemptFailure;
        if (!failure.retryable) {
          throw new ModelProviderError(this.redact(`${this.options.label} failed: ${failure.message}`), false, {
            cause: failure,
          });
        }
        if (attempt > this.options.maxRetries) {
          const message = `${this.options.label} failed after ${attempt} attempt${attempt === 1 ? '' : 's'}; last error: ${failure.message}`;
          throw new ModelProviderError(this.redact(message), true, { cause: failure });
        }
        const delay =
          failure.retryAfterMs !== undefined
            ? Math.min(failure.retryAfterMs, this.options.maxRetryDelayMs)
            : backoffDelayMs(attempt, this.options.retryBaseDelayMs, this.options.maxRetryDelayMs);
        await sleep(delay, signal, () => aborted(signal!));
      }
    }
  }

  /** One HTTP exchange; every failure leaves as an AttemptFailure unless the caller aborted. */
  private async attempt<T>(
    body: string,
    headers: Record<string, string>,
    signal: AbortSignal | undefined,
    read: AnswerReader<T>,
  ): Promise<T> {
    const { timeoutMs } = this.options;
    const exchange = new ModelExchange();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      exchange.abort(new Error(`timed out after ${timeoutMs} ms`));
    }, timeoutMs);
    const forwardAbort = () => exchange.abort(new Error('the model call was aborted'));
    signal?.addEventListener('abort', forwardAbort, { once: true });
    try {
      const agent = await this.connections();
      agent.dispatch({ origin: this.origin, path: this.path, method: 'POST', headers, body }, exchange);
      const head = await exchange.head;
      if (head.statusCode < 200 || head.statusCode >= 300) throw await httpFailure(head, exchange);
      return await read(exchange, head);
    } catch (error) {
      if (error instanceof AttemptFailure || signal?.aborted) throw error;
      if (timedOut) {
        throw new AttemptFailure(`the attempt timed out after ${timeoutMs} ms`, true, undefined, { cause: error });
      }
      if (error instanceof AnswerTooLargeError) throw new AttemptFailure(error.message, false, undefined, { cause: error });
      throw new AttemptFailure(`network error: ${networkCause(error)}`, true, undefined, { cause: error });
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', forwardAbort);
      // Frees the socket when a body is left unread (an error, a stream left at its end marker).
      // Nothing, not even the reason's Error and its stack, once the answer was read whole.
      if (!exchange.ended) exchange.abort(new Error('the answer was not read to its end'));
    }
  }

  /** undici, loaded at the first call (about 0.1 s of CPU that a start need not pay), and its pool. */
  private connections(): Promise<Undici.Agent> {
    this.agent ??= import('undici').then(
      ({ Agent }) =>
        // The attempt's own deadline (timeoutMs) bounds the whole exchange; these bound each phase.
        new Agent({ headersTimeout: this.options.timeoutMs, bodyTimeout: this.options.timeoutMs }),
    );
    return this.agent;
  }

  /** Servers sometimes quote the key they rejected; it must not reach logs or task events. */
  private redact(message: string): string {
    const secret = this.options.secret;
    return secret ? message.split(secret).join('[REDACTED]') : message;
  }
}

function aborted(signal: AbortSignal): ModelCallAbortedError {
  return new ModelCallAbortedError({ cause: signal.reason });
}

async function httpFailure(head: AnswerHead, exchange: ModelExchange): Promise<AttemptFailure> {
  const detail = providerMessage(await exchange.text().catch(() => ''));
  const code = head.statusCode;
  const status = `HTTP ${code}${STATUS_CODES[code] ? ` ${STATUS_CODES[code]}` : ''}`;
  // 429 (rate limited) and every 5xx, Anthropic's 529 "overloaded" included.
  const retryable = code === 429 || code >= 500;
  const retryAfter = retryable ? retryAfterMs((name) => head.header(name)) : undefined;
  return new AttemptFailure(detail ? `${status}: ${detail}` : status, retryable, retryAfter);
}

/** The provider's own words: `{error:{message}}` (OpenAI, Anthropic), `{error}` or `{message}`, else the text. */
function providerMessage(text: string): string {
  try {
    const body = JSON.parse(text) as { error?: { message?: unknown } | string; message?: unknown; detail?: unknown };
    const message = typeof body.error === 'string' ? body.error : (body.error?.message ?? body.message ?? body.detail);
    if (typeof message === 'string' && message.trim()) return excerpt(message);
  } catch {
    // Not JSON (a proxy's HTML page, plain text): fall through to the raw text.
  }
  return excerpt(text);
}

/** The useful part of a network error (ECONNREFUSED, reset…), which some errors keep in their cause. */
function networkCause(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } })?.cause;
  const message = cause?.message ?? (error as Error)?.message ?? String(error);
  return cause?.code && !message.includes(cause.code) ? `${cause.code} ${message}` : message;
}

export function excerpt(text: string, max = 300): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max)}…` : flat;
}
