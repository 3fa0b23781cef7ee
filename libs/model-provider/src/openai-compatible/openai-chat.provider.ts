import { STATUS_CODES } from 'node:http';
import type * as Undici from 'undici';
import { ModelCallAbortedError, ModelProviderError } from '../model-provider.errors';
import { ModelProvider, ModelRequest, ModelResponse } from '../model-provider.port';
import { AttemptFailure } from './attempt-failure';
import { toChatCompletionsRequest } from './chat-completions.request';
import { parseCompletion, StreamedCompletion, WireCompletion } from './chat-completions.response';
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

/** undici's request API and the connection pool of one provider. */
interface Http {
  readonly request: typeof Undici.request;
  readonly agent: Undici.Agent;
}

type HttpResponse = Undici.Dispatcher.ResponseData;

/**
 * A model reached over the OpenAI chat-completions protocol (OpenAI, Ollama, vLLM, LiteLLM…).
 * Over undici's `request`, not the global `fetch`: reading an answer costs about a third of the
 * CPU (a hundred answers at once: 7 ms against 23 ms, BENCHMARKS.md "Webhooks"), on the event loop
 * every task's step shares. Redirects are not followed: a base URL that redirects is reported.
 */
export class OpenAiChatProvider implements ModelProvider {
  readonly name: string;
  private readonly endpoint: string;
  private readonly stream: boolean;
  private readonly timeoutMs: number;
  private readonly maxRetries: number;
  private readonly retryBaseDelayMs: number;
  private readonly maxRetryDelayMs: number;
  private http?: Promise<Http>;

  constructor(private readonly options: OpenAiChatProviderOptions) {
    this.name = options.name ?? 'openai-compatible';
    this.endpoint = `${options.baseUrl.replace(/\/+$/, '')}/chat/completions`;
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
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, this.timeoutMs);
    const forwardAbort = () => controller.abort();
    signal?.addEventListener('abort', forwardAbort, { once: true });
    let bodyRead = false;
    try {
      const { request, agent } = await this.connections();
      const response = await request(this.endpoint, {
        method: 'POST',
        headers: this.headers(),
        body,
        signal: controller.signal,
        dispatcher: agent,
      });
      if (response.statusCode < 200 || response.statusCode >= 300) throw await httpFailure(response);
      const isSse = header(response, 'content-type')?.includes('text/event-stream');
      // A server that ignores `stream: true` and answers plain JSON is still understood.
      if (isSse) return await this.readStream(response);
      const answer = await this.readJson(response);
      bodyRead = true;
      return answer;
    } catch (error) {
      if (error instanceof AttemptFailure || signal?.aborted) throw error;
      if (timedOut) {
        throw new AttemptFailure(`the attempt timed out after ${this.timeoutMs} ms`, true, undefined, {
          cause: error,
        });
      }
      throw new AttemptFailure(`network error: ${networkCause(error)}`, true, undefined, { cause: error });
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', forwardAbort);
      // Frees the socket when a body may be left unread (an error, a stream left at [DONE]). Not
      // after a whole JSON body: an abort builds a DOMException with its stack and dispatches an
      // event, about 0.1 ms, a tenth of the CPU of a burst of answers (BENCHMARKS.md "Webhooks").
      if (!bodyRead) controller.abort();
    }
  }

  /** undici, loaded at the first call (about 0.1 s of CPU that a start need not pay), and its pool. */
  private connections(): Promise<Http> {
    this.http ??= import('undici').then(({ Agent, request }) => ({
      request,
      // The attempt's own deadline (timeoutMs) bounds the whole exchange; these bound each phase.
      agent: new Agent({ headersTimeout: this.timeoutMs, bodyTimeout: this.timeoutMs }),
    }));
    return this.http;
  }

  private async readJson(response: HttpResponse): Promise<ModelResponse> {
    const text = await response.body.text();
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

  private async readStream(response: HttpResponse): Promise<ModelResponse> {
    const completion = new StreamedCompletion();
    let sawDone = false;
    for await (const data of readSseData(response.body)) {
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

async function httpFailure(response: HttpResponse): Promise<AttemptFailure> {
  const detail = providerMessage(await response.body.text().catch(() => ''));
  const code = response.statusCode;
  const status = `HTTP ${code}${STATUS_CODES[code] ? ` ${STATUS_CODES[code]}` : ''}`;
  const retryable = code === 429 || code >= 500;
  const retryAfter = retryable ? retryAfterMs((name) => header(response, name)) : undefined;
  return new AttemptFailure(detail ? `${status}: ${detail}` : status, retryable, retryAfter);
}

/** A response header's value (the first, if it came more than once). */
function header(response: HttpResponse, name: string): string | undefined {
  const value = response.headers[name];
  return Array.isArray(value) ? value[0] : value;
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
