import { MAX_RECORDS_PER_COMMAND } from '../egress/egress-session';
import type { ExecResult } from '../provider/sandbox-provider.port';
import { runTool } from './run-tool';
import { checkArgNames, requiredString } from './tool-args';
import type { ToolResult, ToolSpec } from './tool-spec';
import { ToolArgumentError, ToolFailure } from './tool.errors';

/**
 * `shell`: `bash -lc <command>` inside the task's sandbox, in the workspace, with the task's env
 * and secrets as environment variables. A non-zero exit or a hit limit is an `error` result that
 * carries the exit code and says which limit stopped the command.
 */
export const shellTool: ToolSpec = {
  name: 'shell',
  description:
    'Run a bash command (bash -lc) in the isolated sandbox, with the workspace as the current directory. ' +
    'stdout and stderr come back together, with the exit code. Network access may be off. Long output is truncated.',
  parameters: {
    type: 'object',
    properties: {
      command: { type: 'string', description: 'The command line to run.' },
      timeoutMs: { type: 'integer', minimum: 1, description: 'Wall-clock limit in milliseconds (capped by the server limit).' },
    },
    required: ['command'],
    additionalProperties: false,
  },
  execute: async (args, ctx) => {
    let exec: ExecResult | undefined;
    const result = await runTool(args, ctx, async () => {
      checkArgNames(args, ['command', 'timeoutMs']);
      const command = requiredString(args, 'command');
      if (command.trim() === '') throw new ToolArgumentError('"command" is empty');
      const timeoutMs = optionalPositiveInteger(args.timeoutMs, 'timeoutMs');
      if (!ctx.runCommand)
        throw new ToolFailure(`the shell is unavailable on this server: ${ctx.sandboxUnavailable ?? 'no sandbox provider'}`);
      exec = await ctx.runCommand(command, timeoutMs);
      return describe(exec);
    });
    return exec ? withExit(result, exec) : result;
  },
};

function optionalPositiveInteger(value: unknown, name: string): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1)
    throw new ToolArgumentError(`"${name}" must be a positive integer`);
  return value;
}

/** The output, then a visible line for truncation and for the limit that stopped the command. */
function describe(exec: ExecResult): string {
  const notes: string[] = [];
  if (exec.truncated) notes.push(`[output truncated: only the first part was kept (SANDBOX_MAX_OUTPUT_BYTES)]`);
  if (exec.egressUnrecorded)
    notes.push(
      `[egress: ${exec.egressUnrecorded} more connection(s) were handled but not recorded (at most ${MAX_RECORDS_PER_COMMAND} per command)]`,
    );
  if (exec.cancelled) notes.push('[cancelled: the command was killed]');
  // The limit's name first (docs/api.md: `[limit hit: memory …]`), then what happened and its setting.
  else if (exec.limitHit && exec.limitHit !== 'output')
    notes.push(`[limit hit: ${exec.limitHit}${exec.limitMessage ? `: ${exec.limitMessage}` : ''}]`);
  if (notes.length === 0) return exec.output;
  const separator = exec.output === '' || exec.output.endsWith('\n') ? '' : '\n';
  return `${exec.output}${separator}${notes.join('\n')}`;
}

function withExit(result: ToolResult, exec: ExecResult): ToolResult {
  const failed = exec.exitCode !== 0 || exec.cancelled || (exec.limitHit !== undefined && exec.limitHit !== 'output');
  return {
    status: result.status === 'success' && !failed ? 'success' : 'error',
    output: result.output,
    ...(exec.exitCode === null ? {} : { exitCode: exec.exitCode }),
    ...(exec.egress ? { egress: exec.egress } : {}),
  };
}
