import type { ModelProvider, ModelRequest, ModelResponse } from '../model-provider.port';
import { AttemptFailure } from '../http/attempt-failure';
import type { ModelExchange } from '../http/model-exchange';
import { excerpt, ModelHttpClient } from '../http/model-http-client';
import { safeUrl } from '../http/safe-url';
import { readSseData } from '../http/sse-data.reader';
import { toMessagesRequest } from './messages.request';
import type { WireMessage, WireStreamEvent } from './messages.response';
import { parseMessage, StreamedMessage } from './messages.response';

/** The Messages API version this adapter speaks (the shapes of messages.request.ts and messages.response.ts). */
export const ANTHROPIC_VERSION = '2023-06-01';

export interface AnthropicMessagesProviderOptions {
  /** e.g. `https://api.anthropic.com`; `/v1/messages` is appended. */
  readonly baseUrl: string;
  /** Sent as `x-api-key`. */
  readonly apiKey: string;
  readonly model: string;
  /** Sent as `max_tokens`, which the Messages API requires (default 8192). */
  readonly maxTokens?: number;
  /** Ask for an SSE stream (default true). */
  readonly stream?: boolean;
  /** Limit of one attempt, the whole streamed body included (default 120000). */
  readonly timeoutMs?: number;
  /** Retries after the first attempt on 429, 529 and other 5xx, an `error` event, network errors and timeouts (default 4). */
  readonly maxRetries?: number;
  /** First backoff delay, doubled on each retry (default 500). */
  readonly retryBaseDelayMs?: number;
  /** Longest wait between attempts, a server's Retry-After included (default 30000). */
  readonly maxRetryDelayMs?: number;
}

/**
 * Claude over Anthropic's Messages API, spoken on the wire through the same undici dispatch as
 * the chat-completions adapter (http/model-http-client.ts) rather than Anthropic's SDK, which
 * would bring its own fetch stack and its memory: docs/operations/model-providers.md says why.
 */
export class AnthropicMessagesProvider implements ModelProvider {
  readonly name = 'anthropic';
  private readonly stream: boolean;
  private readonly maxTokens: number;
  private readonly http: ModelHttpClient;

  constructor(private readonly options: AnthropicMessagesProviderOptions) {
    this.stream = options.stream ?? true;
    this.maxTokens = options.maxTokens ?? 8192;
    this.http = new ModelHttpClient({
      endpoint: `${options.baseUrl.replace(/\/+$/, '')}/v1/messages`,
      timeoutMs: options.timeoutMs ?? 120_000,
      maxRetries: options.maxRetries ?? 4,
      retryBaseDelayMs: options.retryBaseDelayMs ?? 500,
      maxRetryDelayMs: options.maxRetryDelayMs ?? 30_000,
      label: `Model call to anthropic (model "${options.model}" at ${safeUrl(options.baseUrl)})`,
      secret: options.apiKey,
    });
  }

  complete(request: ModelRequest): Promise<ModelResponse> {
    const wire = toMessagesRequest(this.options.model, this.maxTokens, request.messages, request.tools, this.stream);
    return this.http.call(JSON.stringify(wire), this.headers(), request.signal, (exchange, head) =>
      head.header('content-type')?.includes('text/event-stream') ? this.readStream(exchange) : this.readJson(exchange),
    );
  }

  private async readJson(exchange: ModelExchange): Promise<ModelResponse> {
    const text = await exchange.text();
    let body: WireMessage;
    try {
      body = JSON.parse(text) as WireMessage;
    } catch {
      throw new AttemptFailure(
        `the response is not Messages API JSON (is the base URL right? it is the origin, e.g. https://api.anthropic.com): ${excerpt(text)}`,
        false,
      );
    }
    return parseMessage(body, this.options.model);
  }

  private async readStream(exchange: ModelExchange): Promise<ModelResponse> {
    const message = new StreamedMessage();
    // Every event's data names its own `type`, so the `event:` lines are not needed.
    for await (const data of readSseData(exchange.chunks())) {
      message.add(parseEvent(data));
      if (message.finished) break;
    }
    // Without message_stop the connection was cut: the answer may be truncated.
    if (!message.finished) throw new AttemptFailure('the stream ended before message_stop', true);
    return message.toResponse(this.options.model);
  }

  private headers(): Record<string, string> {
    return {
      'content-type': 'application/json',
      accept: this.stream ? 'text/event-stream, application/json' : 'application/json',
      'x-api-key': this.options.apiKey,
      'anthropic-version': ANTHROPIC_VERSION,
    };
  }
}

function parseEvent(data: string): WireStreamEvent {
  try {
    return JSON.parse(data) as WireStreamEvent;
  } catch {
    throw new AttemptFailure(`the stream sent an event that is not JSON: ${excerpt(data)}`, false);
  }
}
