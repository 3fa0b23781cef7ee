import { AddressRefusedError, WorkspacePathError } from '@app/common';
import type { ToolContext, ToolResult } from './tool-spec';
import { ToolArgumentError, ToolFailure } from './tool.errors';

/**
 * Runs a tool body and turns every expected failure into an `error` result the model can act on:
 * bad arguments, paths outside the workspace, failed system calls, cancellation. Anything else is
 * a bug in the tool and is rethrown.
 */
export async function runTool(args: Record<string, unknown>, ctx: ToolContext, body: () => Promise<string>): Promise<ToolResult> {
  try {
    return { status: 'success', output: await body() };
  } catch (error) {
    // Whatever an aborted call threw (the signal's reason may be any value), the cause is the abort.
    if (ctx.signal?.aborted) return { status: 'error', output: 'cancelled before it finished' };
    const message = describeExpectedFailure(error, typeof args.path === 'string' ? args.path : '.');
    if (message === undefined) throw error;
    return { status: 'error', output: message };
  }
}

function describeExpectedFailure(error: unknown, path: string): string | undefined {
  if (error instanceof ToolArgumentError) return `invalid arguments: ${error.message}`;
  if (error instanceof ToolFailure || error instanceof WorkspacePathError || error instanceof AddressRefusedError) return error.message;
  if (isSystemError(error)) return describeSystemError(error.code, JSON.stringify(path));
  return undefined;
}

// Messages name the path the model sent, never the host path inside the error.
function describeSystemError(code: string, quoted: string): string {
  switch (code) {
    case 'ENOENT':
      return `${quoted} does not exist (list_files shows what does)`;
    case 'ENOTDIR':
      return `${quoted} is not reachable: a part of it is a file, not a directory`;
    case 'EISDIR':
      return `${quoted} is a directory, not a file`;
    case 'EEXIST':
      return `${quoted} is in the way: an entry with that name already exists`;
    case 'EACCES':
    case 'EPERM':
      return `permission denied on ${quoted}`;
    case 'ELOOP':
      return `${quoted} goes through too many levels of symlinks`;
    case 'ENAMETOOLONG':
      return `${quoted} has a name that is too long`;
    case 'ENOSPC':
    case 'EDQUOT':
      return 'no space left in the workspace\n[limit hit: disk: the workspace is full (SANDBOX_DISK_QUOTA_BYTES); delete files to make room]';
    default:
      return `${quoted}: system error ${code}`;
  }
}

// A failed system call carries `syscall` and an errno `code`: the environment failed, not the tool.
// Duck-typed: errors from Node's own realm fail `instanceof Error` inside jest's sandbox.
function isSystemError(error: unknown): error is { code: string; syscall: string } {
  const candidate = error as { code?: unknown; syscall?: unknown } | null;
  return typeof candidate === 'object' && candidate !== null && typeof candidate.syscall === 'string' && typeof candidate.code === 'string';
}
