import { STATUS_CODES } from 'node:http';
import type * as Undici from 'undici';
import { ModelCallAbortedError, ModelProviderError } from '../model-provider.errors';
import type { ModelProvider, ModelRequest, ModelResponse } from '../model-provider.port';
import { AttemptFailure } from './attempt-failure';
import type { AnswerHead } from './model-exchange';
import { AnswerTooLargeError, ModelExchange } from './model-exchange';
import { toChatCompletionsRequest } from './chat-completions.request';
import type { WireCompletion } from './chat-completions.response';
import { parseCompletion, StreamedCompletion } from './chat-completions.response';
import { backoffDelayMs, retryAfterMs, sleep } from './retry.policy';
import { safeUrl } from './safe-url';
import { readSseData } from './sse-data.reader';

export interface OpenAiChatProviderOptions {
  /** e.g. `https://api.openai.com/v1`; `/chat/completions` is appended. */
  readonly baseUrl: string;
  /** Sent as `Authorization: Bearer …` only when set (local servers need none). */
  readonly apiKey?: string;
  readonly model: string;
  /** Ask for an SSE stream (default true). */
  readonly stream?: boolean;
  /** Limit of one attempt, the whole streamed body included (default 120000). */
  readonly timeoutMs?: number;
  /** Retries after the first attempt on 429, 5xx, network errors and timeouts (default 4). */
  readonly maxRetries?: number;
  /** First backoff delay, doubled on each retry (default 500). */
  readonly retryBaseDelayMs?: number;
  /** Longest wait between attempts, a server's Retry-After included (default 30000). */
  readonly maxRetryDelayMs?: number;
  /** Names the provider in logs and errors (default 'openai-compatible'). */
  readonly name?: string;
}

/**
 * A model reached over the OpenAI chat-completions protocol (OpenAI, Ollama, vLLM, LiteLLM…).
 * Over undici's `dispatch` (model-exchange.ts), not the global `fetch` nor undici's `request`:
 * reading an answer costs a fraction of their CPU, on the event loop every task's step shares
 * (BENCHMARKS.md "Webhooks"). Redirects are not followed: a base URL that redirects is reported.
 */
export class OpenAiChatProvider implements ModelProvider {
  readonly name: string;
  /** Where the chat-completions endpoint is, as undici's dispatch takes it. */
  private readonly origin: string;
  private readonly path: string;
  private readonly stream: boolean;
  private readonly timeoutMs: number;
  private readonly maxRetries: number;
  private readonly retryBaseDelayMs: number;
  private readonly maxRetryDelayMs: number;
  private agent?: Promise<Undici.Agent>;

  constructor(private readonly options: OpenAiChatProviderOptions) {
    this.name = options.name ?? 'openai-compatible';
    const endpoint = new URL(`${options.baseUrl.replace(/\/+$/, '')}/chat/completions`);
    this.origin = endpoint.origin;
    this.path = `${endpoint.pathname}${endpoint.search}`;
    this.stream = options.stream ?? true;
    this.timeoutMs = options.timeoutMs ?? 120_000;
    this.maxRetries = options.maxRetries ?? 4;
    this.retryBaseDelayMs = options.retryBaseDelayMs ?? 500;
    this.maxRetryDelayMs = options.maxRetryDelayMs ?? 30_000;
  }

  async complete(request: ModelRequest): Promise<ModelResponse> {
    const { signal } = request;
    const body = JSON.stringify(toChatCompletionsRequest(this.options.model, request.messages, request.tools, this.stream));
    for (let attempt = 1; ; attempt++) {
      if (signal?.aborted) throw aborted(signal);
      try {
        return await this.attempt(body, signal);
      } catch (error) {
        if (signal?.aborted) throw aborted(signal);
        const failure = error as AttemptFailure;
        if (!failure.retryable) {
          throw new ModelProviderError(this.redact(`${this.label()} failed: ${failure.message}`), false, {
            cause: failure,
          });
        }
        if (attempt > this.maxRetries) {
          const message = `${this.label()} failed after ${attempt} attempt${attempt === 1 ? '' : 's'}; last error: ${failure.message}`;
          throw new ModelProviderError(this.redact(message), true, { cause: failure });
        }
        const delay =
          failure.retryAfterMs !== undefined
            ? Math.min(failure.retryAfterMs, this.maxRetryDelayMs)
            : backoffDelayMs(attempt, this.retryBaseDelayMs, this.maxRetryDelayMs);
        await sleep(delay, signal, () => aborted(signal!));
      }
    }
  }

  /** One HTTP exchange; every failure leaves as an AttemptFailure unless the caller aborted. */
  private async attempt(body: string, signal: AbortSignal | undefined): Promise<ModelResponse> {
    const exchange = new ModelExchange();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      exchange.abort(new Error(`timed out after ${this.timeoutMs} ms`));
    }, this.timeoutMs);
    const forwardAbort = () => exchange.abort(new Error('the model call was aborted'));
    signal?.addEventListener('abort', forwardAbort, { once: true });
    try {
      const agent = await this.connections();
      agent.dispatch({ origin: this.origin, path: this.path, method: 'POST', headers: this.headers(), body }, exchange);
      const head = await exchange.head;
      if (head.statusCode < 200 || head.statusCode >= 300) throw await httpFailure(head, exchange);
      const isSse = head.header('content-type')?.includes('text/event-stream');
      // A server that ignores `stream: true` and answers plain JSON is still understood.
      if (isSse) return await this.readStream(exchange);
      return await this.readJson(exchange);
    } catch (error) {
      if (error instanceof AttemptFailure || signal?.aborted) throw error;
      if (timedOut) {
        throw new AttemptFailure(`the attempt timed out after ${this.timeoutMs} ms`, true, undefined, {
          cause: error,
        });
      }
      if (error instanceof AnswerTooLargeError) throw new AttemptFailure(error.message, false, undefined, { cause: error });
      throw new AttemptFailure(`network error: ${networkCause(error)}`, true, undefined, { cause: error });
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', forwardAbort);
      // Frees the socket when a body is left unread (an error, a stream left at [DONE]). Nothing,
      // not even the reason's Error and its stack, once the answer was read whole: the usual case.
      if (!exchange.ended) exchange.abort(new Error('the answer was not read to its end'));
    }
  }

  /** undici, loaded at the first call (about 0.1 s of CPU that a start need not pay), and its pool. */
  private connections(): Promise<Undici.Agent> {
    this.agent ??= import('undici').then(
      ({ Agent }) =>
        // The attempt's own deadline (timeoutMs) bounds the whole exchange; these bound each phase.
        new Agent({ headersTimeout: this.timeoutMs, bodyTimeout: this.timeoutMs }),
    );
    return this.agent;
  }

  private async readJson(exchange: ModelExchange): Promise<ModelResponse> {
    const text = await exchange.text();
    let body: WireCompletion;
    try {
      body = JSON.parse(text) as WireCompletion;
    } catch {
      throw new AttemptFailure(
        `the response is not chat-completions JSON (is the base URL right? it usually ends in /v1): ${excerpt(text)}`,
        false,
      );
    }
    return parseCompletion(body, this.options.model);
  }

  private async readStream(exchange: ModelExchange): Promise<ModelResponse> {
    const completion = new StreamedCompletion();
    let sawDone = false;
    for await (const data of readSseData(exchange.chunks())) {
      if (data.trim() === '[DONE]') {
        sawDone = true;
        break;
      }
      completion.add(parseChunk(data));
    }
    // Without [DONE] or a finish_reason the connection was cut: the answer may be truncated.
    if (!sawDone && !completion.finished) {
      throw new AttemptFailure('the stream ended before the completion finished', true);
    }
    return completion.toResponse(this.options.model);
  }

  private headers(): Record<string, string> {
    return {
      'content-type': 'application/json',
      accept: this.stream ? 'text/event-stream, application/json' : 'application/json',
      ...(this.options.apiKey ? { authorization: `Bearer ${this.options.apiKey}` } : {}),
    };
  }

  private label(): string {
    return `Model call to ${this.name} (model "${this.options.model}" at ${safeUrl(this.options.baseUrl)})`;
  }

  /** Servers sometimes quote the key they rejected; it must not reach logs or task events. */
  private redact(message: string): string {
    const key = this.options.apiKey;
    return key ? message.split(key).join('[REDACTED]') : message;
  }
}

function aborted(signal: AbortSignal): ModelCallAbortedError {
  return new ModelCallAbortedError({ cause: signal.reason });
}

async function httpFailure(head: AnswerHead, exchange: ModelExchange): Promise<AttemptFailure> {
  const detail = providerMessage(await exchange.text().catch(() => ''));
  const code = head.statusCode;
  const status = `HTTP ${code}${STATUS_CODES[code] ? ` ${STATUS_CODES[code]}` : ''}`;
  const retryable = code === 429 || code >= 500;
  const retryAfter = retryable ? retryAfterMs((name) => head.header(name)) : undefined;
  return new AttemptFailure(detail ? `${status}: ${detail}` : status, retryable, retryAfter);
}

/** The provider's own words: `{error:{message}}` (OpenAI), `{error}` or `{message}`, else the text. */
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

function parseChunk(data: string): WireCompletion {
  try {
    return JSON.parse(data) as WireCompletion;
  } catch {
    throw new AttemptFailure(`the stream sent a chunk that is not JSON: ${excerpt(data)}`, false);
  }
}

/** The useful part of a network error (ECONNREFUSED, reset…), which some errors keep in their cause. */
function networkCause(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } })?.cause;
  const message = cause?.message ?? (error as Error)?.message ?? String(error);
  return cause?.code && !message.includes(cause.code) ? `${cause.code} ${message}` : message;
}

function excerpt(text: string, max = 300): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max)}…` : flat;
}
