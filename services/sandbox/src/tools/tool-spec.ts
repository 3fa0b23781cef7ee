import type { EgressRecord } from '@app/contracts';
import type { ExecResult, FileOwner } from '../provider/sandbox-provider.port';

/** What a tool runs against: the task's workspace and a signal that fires when the call is cancelled. */
export interface ToolContext {
  readonly workspaceRoot: string;
  readonly signal?: AbortSignal;
  /** Who files written from the host must belong to, so the task's sandbox user can change them. */
  readonly fileOwner?: FileOwner;
  /**
   * Runs a command in the task's sandbox with its env and secrets; the output comes back redacted.
   * Absent when no sandbox can run commands here (the reason is in `sandboxUnavailable`).
   */
  readonly runCommand?: (command: string, timeoutMs: number | undefined) => Promise<ExecResult>;
  readonly sandboxUnavailable?: string;
}

/** What the model reads back. Expected failures (bad args, missing file) are `error`, never a throw. */
export interface ToolResult {
  readonly status: 'success' | 'error';
  readonly output: string;
  readonly exitCode?: number;
  /** The connections the command made through the egress proxy (shell, SANDBOX_NETWORK=egress); each becomes an `egress` event. */
  readonly egress?: readonly EgressRecord[];
}

/**
 * A tool the agent can call: its definition as the model sees it (`parameters` is a JSON Schema)
 * and its implementation. `execute` throws only on programming bugs.
 */
export interface ToolSpec {
  readonly name: string;
  readonly description: string;
  readonly parameters: Record<string, unknown>;
  /** Never changes the workspace: no checkpoint is taken after it. */
  readonly readsOnly?: boolean;
  execute(args: Record<string, unknown>, ctx: ToolContext): Promise<ToolResult>;
}
