import type { ChatMessage, ToolDefinition } from '../model-provider.port';

// Wire shapes of the OpenAI chat-completions request, only the fields we send.

export type WireMessage =
  | { role: 'system' | 'user'; content: string }
  | { role: 'assistant'; content: string | null; tool_calls?: WireToolCall[] }
  | { role: 'tool'; tool_call_id: string; content: string };

export interface WireToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export interface WireTool {
  type: 'function';
  function: { name: string; description: string; parameters: Record<string, unknown> };
}

export interface ChatCompletionsRequest {
  model: string;
  messages: WireMessage[];
  tools?: WireTool[];
  stream?: true;
  stream_options?: { include_usage: true };
}

export function toChatCompletionsRequest(
  model: string,
  messages: readonly ChatMessage[],
  tools: readonly ToolDefinition[],
  stream: boolean,
): ChatCompletionsRequest {
  return {
    model,
    messages: messages.map(toWireMessage),
    // Several servers reject `tools: []`, so an empty list is left out altogether.
    ...(tools.length > 0 ? { tools: tools.map(toWireTool) } : {}),
    ...(stream ? { stream: true, stream_options: { include_usage: true } } : {}),
  };
}

function toWireMessage(message: ChatMessage): WireMessage {
  switch (message.role) {
    case 'system':
    case 'user':
      return { role: message.role, content: message.content };
    case 'assistant':
      return {
        role: 'assistant',
        content: message.content,
        // OpenAI rejects an empty `tool_calls` array on an assistant message.
        ...(message.toolCalls?.length
          ? {
              tool_calls: message.toolCalls.map((call) => ({
                id: call.id,
                type: 'function' as const,
                function: { name: call.name, arguments: JSON.stringify(call.arguments) },
              })),
            }
          : {}),
      };
    case 'tool':
      return { role: 'tool', tool_call_id: message.toolCallId, content: message.content };
    default: {
      const _: never = message;
      throw new Error(`Unknown chat message role: ${JSON.stringify(_)}`);
    }
  }
}

function toWireTool(tool: ToolDefinition): WireTool {
  return {
    type: 'function',
    function: { name: tool.name, description: tool.description, parameters: tool.parameters },
  };
}
