import type { ModelResponse, ModelToolCall, TokenUsage } from '../model-provider.port';
import { AttemptFailure } from '../http/attempt-failure';
import { parseToolArguments } from '../tool-arguments';

// Wire shapes of Anthropic Messages API answers: a whole message, or the events of its stream.
// Fields are optional: an answer is read for what it has, and judged by what it lacks.

interface WireBlock {
  type?: string;
  text?: string;
  id?: string;
  name?: string;
  input?: unknown;
}

export interface WireUsage {
  input_tokens?: number | null;
  output_tokens?: number | null;
  cache_read_input_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
}

export interface WireMessage {
  id?: string;
  type?: string;
  model?: string;
  content?: WireBlock[];
  stop_reason?: string | null;
  usage?: WireUsage;
  error?: { type?: string; message?: string };
}

export interface WireStreamEvent {
  type?: string;
  index?: number;
  message?: WireMessage;
  content_block?: WireBlock;
  delta?: { type?: string; text?: string; partial_json?: string; stop_reason?: string | null };
  usage?: WireUsage;
  error?: { type?: string; message?: string };
}

/** A complete (non-streaming) answer. */
export function parseMessage(body: WireMessage, fallbackModel: string): ModelResponse {
  if (body.type === 'error' || body.error) throw streamError(body.error);
  if (!Array.isArray(body.content)) throw new AttemptFailure('the response has no content blocks', false);
  let text = '';
  const toolCalls: ModelToolCall[] = [];
  for (const block of body.content) {
    if (block.type === 'text') text += block.text ?? '';
    else if (block.type === 'tool_use') toolCalls.push(toToolCall(block, block.input, toolCalls.length));
  }
  return {
    text,
    toolCalls,
    usage: toTokenUsage(body.usage),
    model: body.model || fallbackModel,
    finishReason: finishReason(body.stop_reason, toolCalls),
    ...(typeof body.id === 'string' && body.id ? { id: body.id } : {}),
  };
}

/**
 * Accumulates a stream's events the way StreamedCompletion does chat-completions chunks: text
 * deltas in order, each tool_use block's `input_json_delta` pieces by block index, the usage of
 * message_start updated by message_delta. `ping` carries nothing; an `error` event fails the attempt.
 */
export class StreamedMessage {
  private readonly blocks: { block: WireBlock; json: string }[] = [];
  private usage: WireUsage = {};
  private model?: string;
  private id?: string;
  private stopReason?: string | null;
  private stopped = false;

  /** True once message_stop arrived; a stream cut short never gets here. */
  get finished(): boolean {
    return this.stopped;
  }

  add(event: WireStreamEvent): void {
    switch (event.type) {
      case 'message_start':
        this.model ||= event.message?.model;
        if (typeof event.message?.id === 'string') this.id ||= event.message.id;
        this.mergeUsage(event.message?.usage);
        break;
      case 'content_block_start':
        if (event.content_block) this.blocks[event.index ?? this.blocks.length] = { block: { ...event.content_block }, json: '' };
        break;
      case 'content_block_delta': {
        const entry = this.blocks[event.index ?? this.blocks.length - 1];
        if (!entry) break;
        if (event.delta?.type === 'text_delta') entry.block.text = (entry.block.text ?? '') + (event.delta.text ?? '');
        else if (event.delta?.type === 'input_json_delta') entry.json += event.delta.partial_json ?? '';
        break;
      }
      case 'message_delta':
        if (event.delta?.stop_reason !== undefined) this.stopReason = event.delta.stop_reason;
        this.mergeUsage(event.usage);
        break;
      case 'message_stop':
        this.stopped = true;
        break;
      case 'error':
        throw streamError(event.error);
      default:
        // ping, content_block_stop, and event types added later: nothing to keep.
        break;
    }
  }

  toResponse(fallbackModel: string): ModelResponse {
    let text = '';
    const toolCalls: ModelToolCall[] = [];
    for (const entry of this.blocks) {
      if (!entry) continue; // indexes may skip; the array can be sparse
      if (entry.block.type === 'text') text += entry.block.text ?? '';
      else if (entry.block.type === 'tool_use') {
        // A tool without parameters streams no JSON; its start block then holds `input: {}`.
        toolCalls.push(toToolCall(entry.block, entry.json || entry.block.input, toolCalls.length));
      }
    }
    return {
      text,
      toolCalls,
      usage: toTokenUsage(this.usage),
      model: this.model || fallbackModel,
      finishReason: finishReason(this.stopReason, toolCalls),
      ...(this.id ? { id: this.id } : {}),
    };
  }

  /** message_delta's usage counts are cumulative: a field it sends replaces message_start's. */
  private mergeUsage(usage: WireUsage | undefined): void {
    for (const [field, value] of Object.entries(usage ?? {})) {
      if (typeof value === 'number') (this.usage as Record<string, number>)[field] = value;
    }
  }
}

/**
 * inputTokens counts every input token, cached or not: Anthropic's `input_tokens` leaves out the
 * tokens read from or written to its prompt cache, while chat-completions' `prompt_tokens`
 * includes them, so summing the three keeps `inputTokens` and `totalTokens` comparable across
 * providers; the cache fields say how many of them the cache served or stored.
 */
export function toTokenUsage(usage: WireUsage | undefined): TokenUsage {
  const cacheReadTokens = count(usage?.cache_read_input_tokens);
  const cacheWriteTokens = count(usage?.cache_creation_input_tokens);
  const inputTokens = count(usage?.input_tokens) + cacheReadTokens + cacheWriteTokens;
  const outputTokens = count(usage?.output_tokens);
  return { inputTokens, outputTokens, totalTokens: inputTokens + outputTokens, cacheReadTokens, cacheWriteTokens };
}

/** Anthropic's stop reasons in the port's (chat-completions) words; others are kept as they are. */
export function finishReason(stopReason: string | null | undefined, toolCalls: readonly ModelToolCall[]): string {
  switch (stopReason) {
    case 'end_turn':
      return 'stop';
    case 'tool_use':
      return 'tool_calls';
    case 'max_tokens':
      return 'length';
    case null:
    case undefined:
    case '':
      return toolCalls.length > 0 ? 'tool_calls' : 'stop';
    default:
      return stopReason;
  }
}

/** Overload and the API's own trouble are worth another attempt; a refused request is not. */
const RETRYABLE_ERRORS = new Set(['overloaded_error', 'api_error', 'rate_limit_error', 'timeout_error']);

function streamError(error: WireStreamEvent['error']): AttemptFailure {
  const type = error?.type ?? 'error';
  return new AttemptFailure(`the server reported ${type}: ${error?.message ?? 'no message'}`, RETRYABLE_ERRORS.has(type));
}

function toToolCall(block: WireBlock, input: unknown, i: number): ModelToolCall {
  return {
    // Echoed back as tool_use_id, so one must exist even if the server sent none.
    id: block.id || `toolu_${i}`,
    name: block.name ?? '',
    arguments: parseToolArguments(input),
  };
}

function count(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : 0;
}
