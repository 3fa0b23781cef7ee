import type { TaskMcpServer } from '../task.events';
import { McpConfigError } from '../task.errors';

/**
 * An MCP server the agent may use. The service's own come from `MCP_SERVERS` (stdio or
 * Streamable HTTP); a task's own come from its `mcpServers` field on create (HTTP only, since a
 * caller must never start processes on our hosts). Header values may reference the task's
 * secrets as `{{secrets.NAME}}`: only the reference is stored, the value is filled in on connect.
 */
export type McpServerConfig = McpStdioServer | McpHttpServer;

export interface McpStdioServer {
  readonly kind: 'stdio';
  readonly command: string;
  readonly args: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  /** Absolute host paths the server sees read-only when it runs inside bubblewrap (its installed files). */
  readonly mounts: readonly string[];
  /** Whether it may use the network inside bubblewrap; default true. */
  readonly network: boolean;
}

export interface McpHttpServer {
  readonly kind: 'http';
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
}

/** Server names become part of tool names (`mcp__<server>__<tool>`), which models limit to [A-Za-z0-9_-]. */
export const MCP_SERVER_NAME = /^[A-Za-z0-9-]+(_[A-Za-z0-9-]+)*$/;
export const MAX_MCP_SERVERS = 10;
const SECRET_REFERENCE = /\{\{\s*secrets\.([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/g;

/**
 * Checks a `{name: {command, args, env} | {url, headers}}` object (already JSON-parsed).
 * `allowStdio` is false for a task's own servers. Throws McpConfigError naming the bad entry.
 */
export function parseMcpServers(
  raw: unknown,
  { allowStdio, where }: { allowStdio: boolean; where: string },
): Record<string, McpServerConfig> {
  if (raw === undefined || raw === null) return {};
  if (typeof raw !== 'object' || Array.isArray(raw)) throw new McpConfigError(`${where} must be an object of servers by name`);
  const entries = Object.entries(raw as Record<string, unknown>);
  if (entries.length > MAX_MCP_SERVERS) throw new McpConfigError(`${where} may name at most ${MAX_MCP_SERVERS} servers`);
  const servers: Record<string, McpServerConfig> = {};
  for (const [name, value] of entries) {
    if (!MCP_SERVER_NAME.test(name) || name.length > 32) {
      throw new McpConfigError(
        `${where}: server name "${name}" must be 1-32 letters, digits, - or single _ (it becomes part of mcp__<server>__<tool>)`,
      );
    }
    servers[name] = parseServer(value, name, allowStdio, where);
  }
  return servers;
}

function parseServer(value: unknown, name: string, allowStdio: boolean, where: string): McpServerConfig {
  const at = `${where}.${name}`;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new McpConfigError(`${at} must be an object`);
  const v = value as Record<string, unknown>;
  if (typeof v.url === 'string') {
    let url: URL;
    try {
      url = new URL(v.url);
    } catch {
      throw new McpConfigError(`${at}.url is not a URL`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new McpConfigError(`${at}.url must be http(s)`);
    if (url.username || url.password) throw new McpConfigError(`${at}.url must not carry credentials: use headers with {{secrets.NAME}}`);
    return { kind: 'http', url: url.toString(), headers: stringRecord(v.headers, `${at}.headers`) };
  }
  if (v.command !== undefined) {
    if (!allowStdio) throw new McpConfigError(`${at}: a task's own MCP servers must be Streamable HTTP endpoints ({url, headers})`);
    if (typeof v.command !== 'string' || v.command.trim() === '') throw new McpConfigError(`${at}.command must be a non-empty string`);
    const args = v.args ?? [];
    if (!Array.isArray(args) || args.some((a) => typeof a !== 'string')) throw new McpConfigError(`${at}.args must be an array of strings`);
    const mounts = v.mounts ?? [];
    if (!Array.isArray(mounts) || mounts.some((m) => typeof m !== 'string' || !isPlainAbsolutePath(m))) {
      throw new McpConfigError(`${at}.mounts must be an array of absolute, normalised host paths other than /`);
    }
    if (v.network !== undefined && typeof v.network !== 'boolean') throw new McpConfigError(`${at}.network must be true or false`);
    return {
      kind: 'stdio',
      command: v.command,
      args: args as string[],
      env: stringRecord(v.env, `${at}.env`),
      mounts: mounts as string[],
      network: v.network ?? true,
    };
  }
  throw new McpConfigError(`${at} needs either url (Streamable HTTP) or command (stdio)`);
}

/** `/a/b`: absolute, no empty, `.` or `..` segment, no trailing slash, not `/` itself (kept free of node:path). */
function isPlainAbsolutePath(path: string): boolean {
  const segments = path.split('/');
  return (
    segments[0] === '' && segments.length > 1 && segments.slice(1).every((segment) => segment !== '' && segment !== '.' && segment !== '..')
  );
}

function stringRecord(raw: unknown, at: string): Record<string, string> {
  if (raw === undefined) return {};
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw) || Object.values(raw).some((x) => typeof x !== 'string')) {
    throw new McpConfigError(`${at} must be an object of strings`);
  }
  return { ...(raw as Record<string, string>) };
}

/** The secret names a server's headers reference. */
export function referencedSecrets(server: McpServerConfig): string[] {
  if (server.kind !== 'http') return [];
  return Object.values(server.headers).flatMap((value) => [...value.matchAll(SECRET_REFERENCE)].map((m) => m[1]));
}

/** Headers with `{{secrets.NAME}}` filled in; a reference to a secret the task lacks is an error. */
export function resolveHeaders(
  headers: Readonly<Record<string, string>>,
  secrets: Readonly<Record<string, string>>,
): Record<string, string> {
  const resolved: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    resolved[name] = value.replace(SECRET_REFERENCE, (_match, secret: string) => {
      const found = secrets[secret];
      if (found === undefined) throw new McpConfigError(`header ${name} references the secret ${secret}, which this task does not have`);
      return found;
    });
  }
  return resolved;
}

/**
 * A task's own servers from its create request (`mcpServers`): Streamable HTTP only, and every
 * `{{secrets.NAME}}` in a header must name one of the task's secrets.
 */
export function parseTaskMcpServers(raw: unknown, secretNames: readonly string[]): Record<string, TaskMcpServer> {
  const servers = parseMcpServers(raw, { allowStdio: false, where: 'mcpServers' });
  const result: Record<string, TaskMcpServer> = {};
  for (const [name, server] of Object.entries(servers)) {
    if (server.kind !== 'http') continue; // parseMcpServers refused stdio already
    const missing = referencedSecrets(server).filter((secret) => !secretNames.includes(secret));
    if (missing.length > 0)
      throw new McpConfigError(`mcpServers.${name}.headers reference ${missing.join(', ')}, which are not among this task's secrets`);
    result[name] = { url: server.url, headers: server.headers };
  }
  return result;
}
