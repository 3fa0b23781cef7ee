/** A tool the model may call, with a JSON Schema for its arguments. */
export interface ToolDefinition {
  readonly name: string;
  readonly description: string;
  readonly parameters: Record<string, unknown>;
}

export type ChatMessage =
  | { readonly role: 'system'; readonly content: string }
  | { readonly role: 'user'; readonly content: string }
  | { readonly role: 'assistant'; readonly content: string | null; readonly toolCalls?: readonly ModelToolCall[] }
  | { readonly role: 'tool'; readonly toolCallId: string; readonly content: string };

export interface ModelToolCall {
  /** The provider's id for the call; echoed back in the matching `tool` message. */
  readonly id: string;
  readonly name: string;
  /** Parsed arguments; `{}` when the model sent none. Unparseable JSON is kept as `{ _raw }`. */
  readonly arguments: Record<string, unknown>;
}

export interface TokenUsage {
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly totalTokens: number;
}

export interface ModelRequest {
  readonly messages: readonly ChatMessage[];
  readonly tools: readonly ToolDefinition[];
  /** Aborts the call (task cancelled, shutdown). */
  readonly signal?: AbortSignal;
}

export interface ModelResponse {
  readonly text: string;
  readonly toolCalls: readonly ModelToolCall[];
  readonly usage: TokenUsage;
  readonly model: string;
  readonly finishReason: string;
}

/**
 * One chat turn with an LLM. Adapters retry transient failures (429, 5xx, timeouts) with
 * backoff themselves and throw ModelProviderError once they give up.
 */
export interface ModelProvider {
  readonly name: string;
  complete(request: ModelRequest): Promise<ModelResponse>;
}

export class ModelProviderError extends Error {
  readonly code = 'MODEL_PROVIDER.FAILED';
  constructor(
    message: string,
    readonly retryable: boolean,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'ModelProviderError';
  }
}

/** Raised when no model is configured; its message names the variables to set. */
export class ModelNotConfiguredError extends Error {
  readonly code = 'MODEL_PROVIDER.NOT_CONFIGURED';
  constructor(message: string) {
    super(message);
    this.name = 'ModelNotConfiguredError';
  }
}
