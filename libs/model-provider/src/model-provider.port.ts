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
  /** Every input token, those read from and written to the provider's prompt cache included. */
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly totalTokens: number;
  /** Input tokens read from the prompt cache (part of inputTokens); 0 when the provider reports none. */
  readonly cacheReadTokens: number;
  /** Input tokens written to the prompt cache (part of inputTokens); 0 when the provider reports none. */
  readonly cacheWriteTokens: number;
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
  /** The provider's id of this answer (`chatcmpl-…`, `msg_…`), when it sent one. */
  readonly id?: string;
}

/**
 * One chat turn with an LLM. Adapters retry transient failures (429, 5xx, timeouts) with
 * backoff themselves and throw ModelProviderError once they give up.
 */
export interface ModelProvider {
  readonly name: string;
  complete(request: ModelRequest): Promise<ModelResponse>;
}
