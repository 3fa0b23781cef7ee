import { createHash } from 'node:crypto';

/** Model APIs accept tool names of at most 64 characters from [A-Za-z0-9_-]. */
const MAX_TOOL_NAME = 64;

/**
 * The public name of an MCP tool, `mcp__<server>__<tool>`. Characters a model would refuse
 * become `_`; a name over 64 characters keeps a hash of the original, so two long names that
 * share a prefix stay distinct. Callers keep the mapping back to the server's own tool name.
 */
export function mcpToolName(server: string, tool: string): string {
  const name = `mcp__${server}__${tool.replace(/[^A-Za-z0-9_-]/g, '_')}`;
  if (name.length <= MAX_TOOL_NAME) return name;
  const hash = createHash('sha256').update(`${server}\0${tool}`).digest('hex').slice(0, 8);
  return `${name.slice(0, MAX_TOOL_NAME - 9)}_${hash}`;
}

export function isMcpToolName(name: string): boolean {
  return name.startsWith('mcp__');
}
