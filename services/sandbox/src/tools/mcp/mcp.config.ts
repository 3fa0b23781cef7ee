import { intFromEnv, parseAllowHosts } from '@app/common';
import type { McpServerConfig } from '@app/task-domain';
import { parseMcpServers } from '@app/task-domain';
import type { McpLimits } from './mcp-client-pool';

export interface McpSettings {
  /** The service's own servers (`MCP_SERVERS`), offered to every task. */
  readonly servers: Readonly<Record<string, McpServerConfig>>;
  readonly limits: McpLimits;
  /** `host:port` keys a task's own servers may be on although private (`MCP_ALLOW_HOSTS`). */
  readonly allowHosts: ReadonlySet<string>;
}

/**
 * `MCP_SERVERS`: JSON `{"<name>": {"command", "args", "env"}}` (stdio) or `{"<name>": {"url",
 * "headers"}}` (Streamable HTTP). `MCP_CONNECT_TIMEOUT_MS` (default 15 s: connect and list tools),
 * `MCP_CALL_TIMEOUT_MS` (default 120 s per call), `MCP_MAX_OUTPUT_CHARS` (default 100 000),
 * `MCP_ALLOW_HOSTS` (comma-separated `host:port`). A bad value stops the service at start-up.
 */
export function mcpSettingsFromEnv(env: NodeJS.ProcessEnv): McpSettings {
  let raw: unknown;
  try {
    raw = env.MCP_SERVERS?.trim() ? JSON.parse(env.MCP_SERVERS) : undefined;
  } catch (error) {
    throw new Error(`MCP_SERVERS is not valid JSON: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
  return {
    servers: parseMcpServers(raw, { allowStdio: true, where: 'MCP_SERVERS' }),
    limits: {
      connectTimeoutMs: intFromEnv(env, 'MCP_CONNECT_TIMEOUT_MS', 15_000, { min: 1 }),
      callTimeoutMs: intFromEnv(env, 'MCP_CALL_TIMEOUT_MS', 120_000, { min: 1 }),
      maxOutputChars: intFromEnv(env, 'MCP_MAX_OUTPUT_CHARS', 100_000, { min: 100 }),
    },
    allowHosts: parseAllowHosts(env.MCP_ALLOW_HOSTS ?? '', 'MCP_ALLOW_HOSTS'),
  };
}
