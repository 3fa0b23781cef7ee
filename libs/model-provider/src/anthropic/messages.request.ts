import type { ChatMessage, ToolDefinition } from '../model-provider.port';

// Wire shapes of an Anthropic Messages API request (POST /v1/messages), only the fields we send.

export interface CacheControl {
  type: 'ephemeral';
}

export type WireContentBlock =
  | { type: 'text'; text: string; cache_control?: CacheControl }
  | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> }
  | { type: 'tool_result'; tool_use_id: string; content: string };

export interface WireMessage {
  role: 'user' | 'assistant';
  content: WireContentBlock[];
}

export interface WireTool {
  name: string;
  description: string;
  input_schema: Record<string, unknown>;
  cache_control?: CacheControl;
}

export interface MessagesRequest {
  model: string;
  max_tokens: number;
  system?: { type: 'text'; text: string; cache_control?: CacheControl }[];
  messages: WireMessage[];
  tools?: WireTool[];
  stream?: true;
}

const EPHEMERAL: CacheControl = { type: 'ephemeral' };

/**
 * The port's conversation as a Messages request. Unlike chat-completions, the system prompt is the
 * top-level `system` field, tool calls are `tool_use` blocks of the assistant's message, and their
 * results are `tool_result` blocks of a user message: consecutive results (and a user message that
 * follows them) share ONE user message, since the API wants user and assistant turns to alternate.
 * The tool definitions and the system prompt open every request of a task unchanged, so each gets
 * a cache breakpoint (`cache_control` on the last tool and on the system block): later calls read
 * that prefix from Anthropic's prompt cache (docs/operations/model-providers.md).
 */
export function toMessagesRequest(
  model: string,
  maxTokens: number,
  messages: readonly ChatMessage[],
  tools: readonly ToolDefinition[],
  stream: boolean,
): MessagesRequest {
  const system = messages.flatMap((m) => (m.role === 'system' ? [m.content] : [])).join('\n\n');
  const wire: WireMessage[] = [];
  const push = (role: WireMessage['role'], blocks: WireContentBlock[]) => {
    if (blocks.length === 0) return;
    const last = wire[wire.length - 1];
    if (last?.role === role) last.content.push(...blocks);
    else wire.push({ role, content: blocks });
  };
  for (const message of messages) {
    switch (message.role) {
      case 'system':
        break;
      case 'user':
        // The API rejects an empty text block.
        push('user', message.content ? [{ type: 'text', text: message.content }] : []);
        break;
      case 'assistant':
        push('assistant', [
          ...(message.content ? [{ type: 'text' as const, text: message.content }] : []),
          ...(message.toolCalls ?? []).map((call) => ({
            type: 'tool_use' as const,
            id: call.id,
            name: call.name,
            input: call.arguments,
          })),
        ]);
        break;
      case 'tool':
        push('user', [{ type: 'tool_result', tool_use_id: message.toolCallId, content: message.content }]);
        break;
      default: {
        const _: never = message;
        throw new Error(`Unknown chat message role: ${JSON.stringify(_)}`);
      }
    }
  }
  return {
    model,
    max_tokens: maxTokens,
    ...(system ? { system: [{ type: 'text', text: system, cache_control: EPHEMERAL }] } : {}),
    messages: wire,
    ...(tools.length > 0
      ? {
          tools: tools.map((tool, i) => ({
            name: tool.name,
            description: tool.description,
            input_schema: tool.parameters,
            ...(i === tools.length - 1 ? { cache_control: EPHEMERAL } : {}),
          })),
        }
      : {}),
    ...(stream ? { stream: true } : {}),
  };
}
