import type { ToolDefinition } from '@app/model-provider';
import type { McpServerConfig, TaskMcpServer } from '@app/task-domain';
import type { McpClientPool, TaskMcpServers, UnavailableServer } from './mcp/mcp-client-pool';
import { isMcpToolName } from './mcp/mcp-tool-names';
import type { ToolContext, ToolResult, ToolSpec } from './tool-spec';

/** What a task brings to the toolbox: its own MCP servers and its secrets (for their headers). */
export interface TaskTools {
  readonly taskId: string;
  readonly mcpServers: Readonly<Record<string, TaskMcpServer>>;
  readonly secrets: Readonly<Record<string, string>>;
}

/**
 * Every tool a task's model may call: the built-in ones (files, shell, web) and the tools of its
 * MCP servers (the service's `MCP_SERVERS` and the task's own, the task's winning on a shared
 * name), as `mcp__<server>__<tool>`.
 */
export class AgentToolbox {
  private readonly builtIn: ReadonlyMap<string, ToolSpec>;

  constructor(
    builtIn: readonly ToolSpec[],
    private readonly mcp: McpClientPool,
    private readonly serviceMcpServers: Readonly<Record<string, McpServerConfig>>,
  ) {
    this.builtIn = new Map(builtIn.map((t) => [t.name, t]));
  }

  /** The tools offered to the model; MCP servers that cannot be used are added to `unavailable`. */
  async definitions(task: TaskTools, unavailable: UnavailableServer[] = []): Promise<ToolDefinition[]> {
    const own = [...this.builtIn.values()].map(({ name, description, parameters }) => ({ name, description, parameters }));
    const servers = this.serversOf(task);
    if (Object.keys(servers).length === 0) return own;
    return [...own, ...(await this.mcp.definitions(task.taskId, { servers, secrets: task.secrets }, unavailable))];
  }

  /** Whether `toolName` can be run at all (an MCP name is checked against its server when called). */
  knows(toolName: string): boolean {
    return this.builtIn.has(toolName) || isMcpToolName(toolName);
  }

  isBuiltIn(toolName: string): boolean {
    return this.builtIn.has(toolName);
  }

  /** Whether a call of `toolName` may leave the workspace changed (an MCP server may run in the sandbox and write there). */
  mayChangeWorkspace(toolName: string): boolean {
    return this.builtIn.get(toolName)?.readsOnly !== true;
  }

  get builtInNames(): string[] {
    return [...this.builtIn.keys()];
  }

  run(task: TaskTools, toolName: string, args: Record<string, unknown>, context: ToolContext): Promise<ToolResult> {
    const tool = this.builtIn.get(toolName);
    if (tool) return tool.execute(args, context);
    return this.mcp.call(task.taskId, { servers: this.serversOf(task), secrets: task.secrets }, toolName, args, context.signal);
  }

  /** The task's turn ended (or its sandbox expired): its MCP connections are closed. */
  closeTask(taskId: string): Promise<void> {
    return this.mcp.closeTask(taskId);
  }

  closeAll(): Promise<void> {
    return this.mcp.closeAll();
  }

  private serversOf(task: TaskTools): TaskMcpServers {
    const servers: Record<string, TaskMcpServers[string]> = {};
    for (const [name, config] of Object.entries(this.serviceMcpServers)) servers[name] = { config, own: 'service' };
    for (const [name, server] of Object.entries(task.mcpServers)) servers[name] = { config: { kind: 'http', ...server }, own: 'task' };
    return servers;
  }
}
