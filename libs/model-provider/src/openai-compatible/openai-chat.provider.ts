import type { ModelProvider, ModelRequest, ModelResponse } from '../model-provider.port';
import { AttemptFailure } from '../http/attempt-failure';
import type { ModelExchange } from '../http/model-exchange';
import { excerpt, ModelHttpClient } from '../http/model-http-client';
import { safeUrl } from '../http/safe-url';
import { readSseData } from '../http/sse-data.reader';
import { toChatCompletionsRequest } from './chat-completions.request';
import type { WireCompletion } from './chat-completions.response';
import { parseCompletion, StreamedCompletion } from './chat-completions.response';

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
 * Over undici's `dispatch` (http/model-http-client.ts), not the global `fetch` nor undici's
 * `request`: reading an answer costs a fraction of their CPU, on the event loop every task's step
 * shares (BENCHMARKS.md "Webhooks").
 */
export class OpenAiChatProvider implements ModelProvider {
  readonly name: string;
  private readonly stream: boolean;
  private readonly http: ModelHttpClient;

  constructor(private readonly options: OpenAiChatProviderOptions) {
    this.name = options.name ?? 'openai-compatible';
    this.stream = options.stream ?? true;
    this.http = new ModelHttpClient({
      endpoint: `${options.baseUrl.replace(/\/+$/, '')}/chat/completions`,
      timeoutMs: options.timeoutMs ?? 120_000,
      maxRetries: options.maxRetries ?? 4,
      retryBaseDelayMs: options.retryBaseDelayMs ?? 500,
      maxRetryDelayMs: options.maxRetryDelayMs ?? 30_000,
      label: `Model call to ${this.name} (model "${options.model}" at ${safeUrl(options.baseUrl)})`,
      secret: options.apiKey,
    });
  }

  complete(request: ModelRequest): Promise<ModelResponse> {
    const body = JSON.stringify(toChatCompletionsRequest(this.options.model, request.messages, request.tools, this.stream));
    return this.http.call(body, this.headers(), request.signal, (exchange, head) =>
      // A server that ignores `stream: true` and answers plain JSON is still understood.
      head.header('content-type')?.includes('text/event-stream') ? this.readStream(exchange) : this.readJson(exchange),
    );
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
}

function parseChunk(data: string): WireCompletion {
  try {
    return JSON.parse(data) as WireCompletion;
  } catch {
    throw new AttemptFailure(`the stream sent a chunk that is not JSON: ${excerpt(data)}`, false);
  }
}
