import { randomUUID } from 'node:crypto';
import type { ModelResponse, ModelToolCall, TokenUsage } from '../model-provider.port';
import { AttemptFailure } from '../http/attempt-failure';
import { parseToolArguments } from '../tool-arguments';

// Wire shapes of chat-completions responses and stream chunks. Every field is optional because
// "OpenAI-compatible" servers differ in what they leave out.

interface WireToolCallPart {
  index?: number;
  id?: string;
  function?: { name?: string; arguments?: unknown };
}

interface WireChoice {
  index?: number;
  message?: { content?: unknown; tool_calls?: WireToolCallPart[] };
  delta?: { content?: unknown; tool_calls?: WireToolCallPart[] };
  finish_reason?: string | null;
}

export interface WireCompletion {
  id?: string;
  model?: string;
  choices?: WireChoice[];
  usage?: {
    prompt_tokens?: number;
    completion_tokens?: number;
    total_tokens?: number;
    /** OpenAI's automatic prompt caching: the part of prompt_tokens read from its cache. */
    prompt_tokens_details?: { cached_tokens?: number } | null;
  } | null;
  error?: { message?: string } | string;
}

/** A complete (non-streaming) response body. */
export function parseCompletion(body: WireCompletion, fallbackModel: string): ModelResponse {
  throwIfErrorBody(body);
  const choice = body.choices?.[0];
  if (!choice?.message) {
    throw new AttemptFailure('the response has no choices[0].message', false);
  }
  const toolCalls = (choice.message.tool_calls ?? []).map((call, i) =>
    toToolCall(call.id, call.function?.name, call.function?.arguments, i),
  );
  return {
    text: contentText(choice.message.content),
    toolCalls,
    usage: toTokenUsage(body.usage),
    model: body.model || fallbackModel,
    finishReason: choice.finish_reason || defaultFinishReason(toolCalls),
    ...(typeof body.id === 'string' && body.id ? { id: body.id } : {}),
  };
}

/** Accumulates stream chunks: text deltas in order, tool-call fragments by their `index`. */
export class StreamedCompletion {
  private text = '';
  private readonly calls: { id?: string; name: string; args: string }[] = [];
  private usage: WireCompletion['usage'];
  private model?: string;
  private finishReason?: string;
  private id?: string;

  /** True once a choice has reported why it stopped; a stream cut short never gets here. */
  get finished(): boolean {
    return this.finishReason !== undefined;
  }

  add(chunk: WireCompletion): void {
    throwIfErrorBody(chunk);
    this.model ||= chunk.model;
    if (typeof chunk.id === 'string') this.id ||= chunk.id;
    if (chunk.usage) this.usage = chunk.usage;
    // Only the first choice is read (we never ask for `n` > 1); the usage chunk has `choices: []`.
    const choice = chunk.choices?.find((c) => (c.index ?? 0) === 0);
    if (!choice) return;
    this.text += contentText(choice.delta?.content);
    for (const part of choice.delta?.tool_calls ?? []) this.addToolCallPart(part);
    if (choice.finish_reason) this.finishReason = choice.finish_reason;
  }

  toResponse(fallbackModel: string): ModelResponse {
    const toolCalls = this.calls
      .filter((call) => call !== undefined) // indexes may skip; the array can be sparse
      .map((call, i) => toToolCall(call.id, call.name, call.args, i));
    return {
      text: this.text,
      toolCalls,
      usage: toTokenUsage(this.usage),
      model: this.model || fallbackModel,
      finishReason: this.finishReason ?? defaultFinishReason(toolCalls),
      ...(this.id ? { id: this.id } : {}),
    };
  }

  private addToolCallPart(part: WireToolCallPart): void {
    // Some servers omit `index`; a new id then starts a new call, anything else continues the last.
    const last = this.calls.length - 1;
    const index =
      typeof part.index === 'number' ? part.index : part.id && this.calls[last]?.id !== part.id ? this.calls.length : Math.max(last, 0);
    const call = (this.calls[index] ??= { name: '', args: '' });
    call.id ||= part.id;
    // The name arrives whole in the first fragment; servers that repeat it must not double it.
    call.name ||= part.function?.name ?? '';
    const args = part.function?.arguments;
    if (typeof args === 'string') call.args += args;
  }
}

function toToolCall(id: string | undefined, name: string | undefined, args: unknown, i: number): ModelToolCall {
  return {
    // The id is echoed back in the tool message, so one must exist even if the server sent none.
    id: id || `call_${i}_${randomUUID().slice(0, 8)}`,
    name: name ?? '',
    arguments: parseToolArguments(args),
  };
}

function toTokenUsage(usage: WireCompletion['usage']): TokenUsage {
  const inputTokens = count(usage?.prompt_tokens);
  const outputTokens = count(usage?.completion_tokens);
  return {
    inputTokens,
    outputTokens,
    totalTokens: count(usage?.total_tokens) || inputTokens + outputTokens,
    // The chat-completions protocol reports cache reads (OpenAI) but never cache writes.
    cacheReadTokens: count(usage?.prompt_tokens_details?.cached_tokens),
    cacheWriteTokens: 0,
  };
}

function count(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : 0;
}

/** Content is usually a string, but some servers send an array of `{type:'text', text}` parts. */
function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content.map((part) => (typeof part?.text === 'string' ? part.text : '')).join('');
  }
  return '';
}

function defaultFinishReason(toolCalls: readonly ModelToolCall[]): string {
  return toolCalls.length > 0 ? 'tool_calls' : 'stop';
}

/** Some servers answer 200 and put the failure in the body, or in a chunk mid-stream. */
function throwIfErrorBody(body: WireCompletion): void {
  if (!body.error) return;
  const message = typeof body.error === 'string' ? body.error : body.error.message;
  // The server accepted the request, so this is its own trouble (overload, upstream): retry.
  throw new AttemptFailure(`the server reported an error: ${message ?? JSON.stringify(body.error)}`, true);
}
