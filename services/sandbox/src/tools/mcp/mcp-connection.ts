import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { McpServerConfig } from '@app/task-domain';
import { resolveHeaders } from '@app/task-domain';
import type { McpStdioLauncher } from './mcp-stdio-launcher';
import { StderrTail } from './stderr-tail';

/** One tool of a connected server: its own name and what the model is told about it. */
export interface McpServerTool {
  readonly name: string;
  readonly description: string;
  readonly inputSchema: Record<string, unknown>;
}

export interface McpConnection {
  readonly tools: readonly McpServerTool[];
  readonly client: Client;
  /** False once the server closed (crashed, exited, dropped the session). */
  readonly open: boolean;
  close(): Promise<void>;
}

export interface ConnectOptions {
  readonly timeoutMs: number;
  /** The task's secrets, for `{{secrets.NAME}}` in headers. */
  readonly secrets: Readonly<Record<string, string>>;
  /** The fetch of HTTP servers (a task's own use one that refuses private addresses). */
  readonly fetch?: typeof fetch;
  /** How a stdio server's process is started (inside bubblewrap, or plainly). */
  readonly stdioLauncher: McpStdioLauncher;
}

/** Tools kept per server: a server listing thousands would drown the model's context. */
const MAX_TOOLS_PER_SERVER = 128;
const MAX_LIST_PAGES = 8;

/**
 * Connects to one MCP server and lists its tools, within `timeoutMs`. A stdio server is started
 * by the launcher with only its configured env (never the task's secrets) and an empty HOME
 * directory of its own that is removed when it closes.
 */
export async function connectMcpServer(name: string, config: McpServerConfig, options: ConnectOptions): Promise<McpConnection> {
  // Loaded at the first connection, not at start: the SDK and zod under it cost every start a few
  // hundred ms of CPU otherwise, and most deployments configure no MCP server (BENCHMARKS.md, "Footprint").
  const [{ Client }, { StdioClientTransport }, { StreamableHTTPClientTransport }] = await Promise.all([
    import('@modelcontextprotocol/sdk/client/index.js'),
    import('@modelcontextprotocol/sdk/client/stdio.js'),
    import('@modelcontextprotocol/sdk/client/streamableHttp.js'),
  ]);
  let workDir: string | undefined;
  let stderr: StderrTail | undefined;
  let transport: Transport;
  if (config.kind === 'stdio') {
    const homeDir = (workDir = await mkdtemp(join(tmpdir(), `ats-mcp-${name}-`)));
    const launch = await options.stdioLauncher.launch(config, homeDir).catch(async (error: unknown) => {
      await rm(homeDir, { recursive: true, force: true }).catch(() => undefined);
      throw error;
    });
    const stdio = new StdioClientTransport({ ...launch, stderr: 'pipe' });
    stderr = new StderrTail(stdio.stderr, config.env);
    transport = stdio;
  } else {
    transport = new StreamableHTTPClientTransport(new URL(config.url), {
      requestInit: { headers: resolveHeaders(config.headers, options.secrets) },
      ...(options.fetch ? { fetch: options.fetch } : {}),
      reconnectionOptions: { maxReconnectionDelay: 1000, initialReconnectionDelay: 200, reconnectionDelayGrowFactor: 2, maxRetries: 1 },
    });
  }
  const client = new Client({ name: 'agentic-task-service', version: '1.0.0' });
  let open = true;
  const cleanup = async () => {
    open = false;
    if (workDir) await rm(workDir, { recursive: true, force: true }).catch(() => undefined);
  };
  client.onclose = () => void cleanup();
  try {
    await client.connect(transport, { timeout: options.timeoutMs });
    const tools = await listAllTools(client, options.timeoutMs);
    return {
      tools,
      client,
      get open() {
        return open;
      },
      close: async () => {
        await client.close().catch(() => undefined);
        await cleanup();
      },
    };
  } catch (error) {
    await client.close().catch(() => undefined);
    await cleanup();
    throw stderr ? stderr.explain(error) : error;
  }
}

async function listAllTools(client: Client, timeoutMs: number): Promise<McpServerTool[]> {
  const tools: McpServerTool[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < MAX_LIST_PAGES && tools.length < MAX_TOOLS_PER_SERVER; page++) {
    const listed = await client.listTools(cursor ? { cursor } : undefined, { timeout: timeoutMs });
    for (const tool of listed.tools) {
      tools.push({ name: tool.name, description: tool.description ?? '', inputSchema: tool.inputSchema as Record<string, unknown> });
    }
    cursor = listed.nextCursor;
    if (!cursor) break;
  }
  return tools.slice(0, MAX_TOOLS_PER_SERVER);
}
