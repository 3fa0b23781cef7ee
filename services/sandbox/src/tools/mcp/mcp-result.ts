import type { ToolResult } from '../tool-spec';

/** The parts of an MCP CallToolResult we read (the SDK's type is a wide union). */
export interface McpCallResult {
  readonly content?: readonly McpContent[];
  readonly structuredContent?: unknown;
  readonly isError?: boolean;
  /** Old servers answer `{toolResult}` instead. */
  readonly toolResult?: unknown;
}

type McpContent =
  | { type: 'text'; text: string }
  | { type: 'image' | 'audio'; data: string; mimeType: string }
  | { type: 'resource'; resource: { uri: string; mimeType?: string; text?: string; blob?: string } }
  | { type: 'resource_link'; uri: string; name?: string; mimeType?: string }
  | { type: string; [key: string]: unknown };

/**
 * An MCP tool result as the text the model reads back: text as is, resources by their text or
 * URI, images and audio described (size and type: the chat protocol carries no binary in a tool
 * message). `isError` becomes an error result. Cut at `maxChars`, saying so.
 */
export function toToolResult(result: McpCallResult, maxChars: number): ToolResult {
  const parts: string[] = [];
  for (const item of result.content ?? []) parts.push(describe(item));
  if (parts.length === 0 && result.structuredContent !== undefined) parts.push(JSON.stringify(result.structuredContent));
  if (parts.length === 0 && result.toolResult !== undefined)
    parts.push(typeof result.toolResult === 'string' ? result.toolResult : JSON.stringify(result.toolResult));
  let output = parts.join('\n');
  if (output.length > maxChars) output = `${output.slice(0, maxChars)}\n[output truncated: ${output.length} characters, ${maxChars} kept]`;
  return { status: result.isError ? 'error' : 'success', output: output || '(no content)' };
}

function describe(item: McpContent): string {
  switch (item.type) {
    case 'text':
      return String(item.text);
    case 'image':
    case 'audio': {
      const { data, mimeType } = item as { data: string; mimeType: string };
      return `[${item.type}: ${mimeType}, ${Math.floor((data.length * 3) / 4)} bytes]`;
    }
    case 'resource': {
      const { resource } = item as { resource: { uri: string; mimeType?: string; text?: string; blob?: string } };
      if (typeof resource.text === 'string') return `[resource ${resource.uri}]\n${resource.text}`;
      return `[resource ${resource.uri}${resource.mimeType ? `, ${resource.mimeType}` : ''}${resource.blob ? `, ${Math.floor((resource.blob.length * 3) / 4)} bytes` : ''}]`;
    }
    case 'resource_link': {
      const link = item as { uri: string; name?: string };
      return `[resource link ${link.uri}${link.name ? ` (${link.name})` : ''}]`;
    }
    default:
      return `[${item.type} content]`;
  }
}
