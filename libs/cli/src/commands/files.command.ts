import type { CliContext } from '../context';
import { ExitCode } from '../exit-codes';
import { fileLine, momentOf } from '../file-listing';
import { jsonLine, safeLine } from '../untrusted-text';

export interface FilesOptions {
  readonly at?: number;
  readonly json: boolean;
}

/**
 * `ats files ID [--at N]`: every file of the task's workspace as it was right after event N (now
 * without --at), read from its checkpoints page after page: sha256, size and path per line.
 */
export async function filesCommand(ctx: CliContext, taskId: string, options: FilesOptions): Promise<ExitCode> {
  const { term } = ctx;
  const ats = await ctx.client();
  let shown = 0;
  for await (const file of ats.files.listAll(taskId, options.at === undefined ? {} : { at: options.at })) {
    shown += 1;
    term.line(options.json ? jsonLine(file) : fileLine(file));
  }
  if (shown === 0 && !options.json) {
    const none = options.at === undefined ? 'has no files now' : `had no files ${momentOf(options.at)}`;
    term.line(term.colors.dim(`${safeLine(taskId)} ${none}`));
  }
  return ExitCode.ok;
}
