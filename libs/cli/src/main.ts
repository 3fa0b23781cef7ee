import { AtsError } from '@agentic-task-service/client';
import { processContext } from './context';
import { CliExit, ExitCode } from './exit-codes';
import { buildProgram } from './program';
import { safeLine } from './untrusted-text';

// The `ats` entry point (libs/cli/bin/ats.js loads it): runs one command and exits with its status.

async function main(): Promise<void> {
  const ctx = processContext();
  let code: ExitCode = ExitCode.ok;
  try {
    await buildProgram(ctx, (status) => (code = status)).parseAsync(process.argv);
  } catch (error) {
    code = error instanceof CliExit ? error.code : ExitCode.failed;
    const message = describe(error);
    if (message) ctx.term.error(message);
  }
  await ctx.term.flush();
  // Exits now rather than when idle sockets close: the last event was printed and flushed.
  process.exit(code);
}

/** The line printed for an error: the API's own message and code, never a stack trace. */
function describe(error: unknown): string {
  if (error instanceof CliExit) return error.message;
  if (error instanceof AtsError) return `ats: ${safeLine(error.message)} (${error.code})`;
  return `ats: ${safeLine(error instanceof Error ? error.message : String(error))}`;
}

void main();
