import type { Attributes } from '@opentelemetry/api';
import type { ChatMessage, LlmProviderKind, ModelResponse, ModelToolCall, TokenUsage } from '@app/model-provider';
import { resolveModelConfig } from '@app/model-provider';

/**
 * Attribute names of the OpenTelemetry GenAI semantic conventions (docs/operations/observability.md,
 * "GenAI spans and metrics"): the `chat` span of each model call and the `execute_tool` span of each
 * tool call. The content attributes are set only when capture is on, and then redacted.
 */
export const GEN_AI = {
  operationName: 'gen_ai.operation.name',
  providerName: 'gen_ai.provider.name',
  requestModel: 'gen_ai.request.model',
  requestMaxTokens: 'gen_ai.request.max_tokens',
  responseModel: 'gen_ai.response.model',
  responseId: 'gen_ai.response.id',
  finishReasons: 'gen_ai.response.finish_reasons',
  inputTokens: 'gen_ai.usage.input_tokens',
  outputTokens: 'gen_ai.usage.output_tokens',
  cacheReadInputTokens: 'gen_ai.usage.cache_read.input_tokens',
  cacheCreationInputTokens: 'gen_ai.usage.cache_creation.input_tokens',
  inputMessages: 'gen_ai.input.messages',
  outputMessages: 'gen_ai.output.messages',
  toolName: 'gen_ai.tool.name',
  toolCallId: 'gen_ai.tool.call.id',
  toolType: 'gen_ai.tool.type',
  toolCallArguments: 'gen_ai.tool.call.arguments',
  toolCallResult: 'gen_ai.tool.call.result',
  tokenType: 'gen_ai.token.type',
  errorType: 'error.type',
} as const;

export const CHAT = 'chat';
export const EXECUTE_TOOL = 'execute_tool';

/** What every model call of this process is addressed to, as the conventions name it. */
export interface GenAiTarget {
  readonly providerName: string;
  /** LLM_MODEL; undefined while no model is configured. */
  readonly requestModel?: string;
  /** The `max_tokens` each request sends, where the provider sends one (Anthropic). */
  readonly requestMaxTokens?: number;
}

/**
 * Our LLM_PROVIDER kinds under the conventions' provider names: an OpenAI-compatible endpoint
 * speaks OpenAI's API, so it is `openai` (the conventions have no name for "some server speaking
 * OpenAI's protocol"); Ollama is not in their list and keeps its own name, as they allow.
 */
const PROVIDER_NAMES: Record<LlmProviderKind, string> = {
  openai: 'openai',
  'openai-compatible': 'openai',
  anthropic: 'anthropic',
  ollama: 'ollama',
};

export function genAiTargetFromEnv(env: NodeJS.ProcessEnv): GenAiTarget {
  const config = resolveModelConfig(env);
  if (config.status === 'unavailable') return { providerName: config.provider ? PROVIDER_NAMES[config.provider] : 'unknown' };
  return {
    providerName: PROVIDER_NAMES[config.provider],
    requestModel: config.model,
    ...(config.provider === 'anthropic' ? { requestMaxTokens: config.maxTokens } : {}),
  };
}

/** `chat <model>`, or `chat` alone when no model is configured. */
export function chatSpanName(target: GenAiTarget): string {
  return target.requestModel ? `${CHAT} ${target.requestModel}` : CHAT;
}

export function chatRequestAttributes(target: GenAiTarget): Attributes {
  return {
    [GEN_AI.operationName]: CHAT,
    [GEN_AI.providerName]: target.providerName,
    ...(target.requestModel ? { [GEN_AI.requestModel]: target.requestModel } : {}),
    ...(target.requestMaxTokens === undefined ? {} : { [GEN_AI.requestMaxTokens]: target.requestMaxTokens }),
  };
}

export function chatResponseAttributes(response: ModelResponse): Attributes {
  return {
    ...(response.model ? { [GEN_AI.responseModel]: response.model } : {}),
    ...(response.id ? { [GEN_AI.responseId]: response.id } : {}),
    ...(response.finishReason ? { [GEN_AI.finishReasons]: [response.finishReason] } : {}),
    ...usageAttributes(response.usage),
  };
}

function usageAttributes(usage: TokenUsage): Attributes {
  return {
    [GEN_AI.inputTokens]: usage.inputTokens,
    [GEN_AI.outputTokens]: usage.outputTokens,
    ...(usage.cacheReadTokens > 0 ? { [GEN_AI.cacheReadInputTokens]: usage.cacheReadTokens } : {}),
    ...(usage.cacheWriteTokens > 0 ? { [GEN_AI.cacheCreationInputTokens]: usage.cacheWriteTokens } : {}),
  };
}

/** One message as the conventions' JSON schema for `gen_ai.input.messages` / `gen_ai.output.messages` has it. */
interface GenAiMessage {
  readonly role: string;
  readonly parts: readonly GenAiPart[];
  readonly finish_reason?: string;
}

type GenAiPart =
  | { readonly type: 'text'; readonly content: string }
  | { readonly type: 'tool_call'; readonly id: string; readonly name: string; readonly arguments: Record<string, unknown> }
  | { readonly type: 'tool_call_response'; readonly id: string; readonly response: string };

export function inputMessages(messages: readonly ChatMessage[]): GenAiMessage[] {
  return messages.map((message) => {
    switch (message.role) {
      case 'system':
      case 'user':
        return { role: message.role, parts: [{ type: 'text', content: message.content }] };
      case 'assistant':
        return { role: 'assistant', parts: assistantParts(message.content, message.toolCalls ?? []) };
      case 'tool':
        return { role: 'tool', parts: [{ type: 'tool_call_response', id: message.toolCallId, response: message.content }] };
      default: {
        const _exhaustive: never = message;
        return _exhaustive;
      }
    }
  });
}

export function outputMessages(response: ModelResponse): GenAiMessage[] {
  return [{ role: 'assistant', parts: assistantParts(response.text, response.toolCalls), finish_reason: response.finishReason }];
}

function assistantParts(text: string | null, calls: readonly ModelToolCall[]): GenAiPart[] {
  return [
    ...(text ? [{ type: 'text' as const, content: text }] : []),
    ...calls.map((c) => ({ type: 'tool_call' as const, id: c.id, name: c.name, arguments: c.arguments })),
  ];
}

/** `execute_tool <tool>`: the span of one tool call the agent runs for the model. */
export function executeToolSpanName(toolName: string): string {
  return `${EXECUTE_TOOL} ${toolName}`;
}

export function executeToolAttributes(toolName: string, callId: string): Attributes {
  // `function`: the agent runs the tool (in its sandbox) with the arguments the model chose.
  return { [GEN_AI.operationName]: EXECUTE_TOOL, [GEN_AI.toolName]: toolName, [GEN_AI.toolCallId]: callId, [GEN_AI.toolType]: 'function' };
}

/** The name a failure is reported under (`error.type`): its class, never its message (which can quote a secret). */
export function errorType(error: unknown): string {
  return error instanceof Error ? error.name : '_OTHER';
}
