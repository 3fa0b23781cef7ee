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

/** A model reached over the OpenAI chat-completions protocol (OpenAI, Ollama, vLLM, LiteLLM…). */
export class OpenAiChatProvider implements ModelProvider {
  readonly name: string;
  private readonly endpoint: string;
  private readonly stream: boolean;
  private readonly timeoutMs: number;
  private readonly maxRetries: number;
  private readonly retryBaseDelayMs: number;
  private readonly maxRetryDelayMs: number;

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
    try {
      const response = await fetch(this.endpoint, {
        method: 'POST',
        headers: this.headers(),
        body,
        signal: controller.signal,
      });
      if (!response.ok) throw await httpFailure(response);
      const isSse = response.headers.get('content-type')?.includes('text/event-stream');
      // A server that ignores `stream: true` and answers plain JSON is still understood.
      return isSse ? await this.readStream(response) : await this.readJson(response);
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
      // Frees the socket when a body was left unread; a no-op after a complete read.
      controller.abort();
    }
  }

  private async readJson(response: Response): Promise<ModelResponse> {
    const text = await response.text();
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

  private async readStream(response: Response): Promise<ModelResponse> {
    const completion = new StreamedCompletion();
    let sawDone = false;
    for await (const data of readSseData(response.body!)) {
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

async function httpFailure(response: Response): Promise<AttemptFailure> {
  const detail = providerMessage(await response.text().catch(() => ''));
  const status = `HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ''}`;
  const retryable = response.status === 429 || response.status >= 500;
  return new AttemptFailure(detail ? `${status}: ${detail}` : status, retryable, retryable ? retryAfterMs(response.headers) : undefined);
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

/** fetch() reports "fetch failed"; the useful part (ECONNREFUSED, reset…) is in its cause. */
function networkCause(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } })?.cause;
  const message = cause?.message ?? (error as Error)?.message ?? String(error);
  return cause?.code && !message.includes(cause.code) ? `${cause.code} ${message}` : message;
}

function excerpt(text: string, max = 300): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max)}…` : flat;
}
