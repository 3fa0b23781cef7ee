import type { ToolDefinition } from '@app/model-provider';
import type { ToolResult } from '../tool-spec';
import type { McpConnection } from './mcp-connection';
import { connectMcpServer } from './mcp-connection';
import type { McpCallResult } from './mcp-result';
import { toToolResult } from './mcp-result';
import type { McpServerConfig } from '@app/task-domain';
import { mcpToolName } from './mcp-tool-names';
import type { McpStdioLauncher } from './mcp-stdio-launcher';

export interface McpLimits {
  /** Connecting and listing a server's tools. */
  readonly connectTimeoutMs: number;
  /** One tool call. */
  readonly callTimeoutMs: number;
  /** Characters of a result the model reads back. */
  readonly maxOutputChars: number;
}

/** A server whose tools were left out of a listing, and why. */
export interface UnavailableServer {
  readonly server: string;
  readonly reason: string;
}

/** The servers a task may use, each with where it came from (a task's own use the guarded fetch). */
export type TaskMcpServers = Readonly<Record<string, { readonly config: McpServerConfig; readonly own: 'service' | 'task' }>>;

export interface McpTaskContext {
  readonly servers: TaskMcpServers;
  readonly secrets: Readonly<Record<string, string>>;
}

/**
 * The MCP connections of each task, opened on first use and kept until the task's turn ends or
 * its sandbox expires (`closeTask`). A server that fails to connect, hangs or crashes costs the
 * call an error result the model reads; the task goes on, and the next use connects again.
 */
export class McpClientPool {
  private readonly tasks = new Map<string, Map<string, Promise<McpConnection>>>();

  constructor(
    private readonly limits: McpLimits,
    /** The fetch a task's own HTTP servers are reached with: it refuses private addresses. */
    private readonly taskFetch: typeof fetch | undefined,
    private readonly stdioLauncher: McpStdioLauncher,
    private readonly onError: (message: string) => void = () => undefined,
  ) {}

  /** Every tool of the task's servers, as `mcp__<server>__<tool>`; a server that fails is left out, logged and added to `unavailable`. */
  async definitions(taskId: string, context: McpTaskContext, unavailable: UnavailableServer[] = []): Promise<ToolDefinition[]> {
    const listed = await Promise.all(
      Object.keys(context.servers).map(async (server) => {
        try {
          const connection = await this.connection(taskId, server, context);
          return connection.tools.map((tool) => ({
            name: mcpToolName(server, tool.name),
            description: `[MCP server ${server}] ${tool.description}`.trim(),
            parameters: tool.inputSchema,
          }));
        } catch (error) {
          this.onError(`MCP server ${server} of task ${taskId} is left out: ${messageOf(error)}`);
          unavailable.push({ server, reason: messageOf(error) });
          return [];
        }
      }),
    );
    return listed.flat();
  }

  async call(
    taskId: string,
    context: McpTaskContext,
    publicName: string,
    args: Record<string, unknown>,
    signal?: AbortSignal,
  ): Promise<ToolResult> {
    const server = serverOf(publicName);
    if (!server || !context.servers[server])
      return { status: 'error', output: `Unknown MCP tool "${publicName}": no MCP server "${server ?? ''}" for this task.` };
    let connection: McpConnection;
    try {
      connection = await this.connection(taskId, server, context);
    } catch (error) {
      return { status: 'error', output: `MCP server ${server} is unavailable: ${messageOf(error)}` };
    }
    const tool = connection.tools.find((t) => mcpToolName(server, t.name) === publicName);
    if (!tool) return { status: 'error', output: `MCP server ${server} has no tool matching "${publicName}".` };
    try {
      const result = await connection.client.callTool({ name: tool.name, arguments: args }, undefined, {
        timeout: this.limits.callTimeoutMs,
        signal,
      });
      return toToolResult(result as McpCallResult, this.limits.maxOutputChars);
    } catch (error) {
      // A hung or broken server: drop the connection, the next call starts afresh.
      await this.drop(taskId, server);
      if (signal?.aborted) return { status: 'error', output: `MCP tool ${publicName} was cancelled.` };
      return { status: 'error', output: `MCP tool ${publicName} failed: ${messageOf(error)}` };
    }
  }

  async closeTask(taskId: string): Promise<void> {
    const servers = this.tasks.get(taskId);
    this.tasks.delete(taskId);
    if (!servers) return;
    await Promise.all([...servers.values()].map((c) => c.then((conn) => conn.close()).catch(() => undefined)));
  }

  async closeAll(): Promise<void> {
    await Promise.all([...this.tasks.keys()].map((taskId) => this.closeTask(taskId)));
  }

  /** Tasks with open connections (tests, and the sweep). */
  get openTaskIds(): string[] {
    return [...this.tasks.keys()];
  }

  private connection(taskId: string, server: string, context: McpTaskContext): Promise<McpConnection> {
    let servers = this.tasks.get(taskId);
    if (!servers) this.tasks.set(taskId, (servers = new Map()));
    const existing = servers.get(server);
    if (existing) {
      return existing.then((conn) => {
        if (conn.open) return conn;
        servers!.delete(server);
        return this.connection(taskId, server, context);
      });
    }
    const { config, own } = context.servers[server];
    const connecting = connectMcpServer(server, config, {
      timeoutMs: this.limits.connectTimeoutMs,
      secrets: context.secrets,
      fetch: own === 'task' ? this.taskFetch : undefined,
      stdioLauncher: this.stdioLauncher,
    });
    servers.set(server, connecting);
    connecting.catch(() => {
      if (servers!.get(server) === connecting) servers!.delete(server);
    });
    return connecting;
  }

  private async drop(taskId: string, server: string): Promise<void> {
    const connecting = this.tasks.get(taskId)?.get(server);
    this.tasks.get(taskId)?.delete(server);
    await connecting?.then((c) => c.close()).catch(() => undefined);
  }
}

/** `mcp__<server>__<tool>` → server (server names never contain `__`). */
function serverOf(publicName: string): string | undefined {
  const match = /^mcp__(.+?)__/.exec(publicName);
  return match?.[1];
}

/** The message with its causes: fetch says only "fetch failed", the reason is in `cause`. */
function messageOf(error: unknown): string {
  const parts: string[] = [];
  for (let e: unknown = error, depth = 0; e !== undefined && depth < 4; depth++) {
    parts.push(e instanceof Error ? e.message : String(e));
    e = e instanceof Error ? e.cause : undefined;
  }
  return parts.join(': ');
}
