import type { CliContext } from '../context';
import { ExitCode } from '../exit-codes';
import { jsonLine, safeData, safeLine } from '../untrusted-text';

export interface LsOptions {
  readonly all: boolean;
  readonly json: boolean;
  readonly limit: number;
}

/** `ats ls`: the caller's tasks, newest first; --all includes those created with showInHistory false. */
export async function lsCommand(ctx: CliContext, options: LsOptions): Promise<ExitCode> {
  const { term } = ctx;
  const ats = await ctx.client();
  const c = term.colors;
  let shown = 0;
  for await (const untrusted of ats.tasks.list({ includeHidden: options.all })) {
    if (shown === options.limit) break;
    shown += 1;
    if (options.json) {
      term.line(jsonLine(untrusted));
      continue;
    }
    const task = safeData(untrusted);
    const status =
      task.status === 'completed' ? c.green(task.status) : task.status === 'failed' ? c.red(task.status) : c.yellow(task.status);
    const first = safeLine(task.messages[0]?.text ?? '');
    const message = first.length > 60 ? `${first.slice(0, 59)}…` : first;
    term.line(
      `${task.id}  ${status}${' '.repeat(Math.max(0, 17 - task.status.length))}  ${c.dim(task.createdAt.slice(0, 19).replace('T', ' '))}  ${message}`,
    );
  }
  if (shown === 0 && !options.json) term.line(c.dim('no tasks yet: ats run "<message>"'));
  return ExitCode.ok;
}
