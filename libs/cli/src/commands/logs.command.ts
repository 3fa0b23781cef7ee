import type { ApprovalChoice } from '../approval-choice';
import type { CliContext } from '../context';
import { EventPrinter } from '../event-printer';
import { ExitCode } from '../exit-codes';
import { followTask } from '../follow-task';
import { jsonLine } from '../untrusted-text';
import { approvalPolicy } from './run.command';

export interface LogsOptions {
  readonly follow: boolean;
  readonly after: number;
  readonly json: boolean;
  readonly approve?: ApprovalChoice;
}

/**
 * `ats logs ID`: the task's events after --after (the whole history by default). Without
 * --follow it stops at the last event recorded now; with it, it goes on live to the end of the
 * turn, resuming with Last-Event-ID if the connection drops, and asks about approvals as `run` does.
 */
export async function logsCommand(ctx: CliContext, taskId: string, options: LogsOptions): Promise<ExitCode> {
  const { term } = ctx;
  const ats = await ctx.client();
  if (options.follow) {
    return followTask(ats, term, taskId, { after: options.after, json: options.json, approvals: approvalPolicy(ctx, options.approve) });
  }
  const { lastEventId } = await ats.tasks.get(taskId);
  if (lastEventId <= options.after) return ExitCode.ok;
  const printer = new EventPrinter(term, taskId);
  for await (const event of ats.tasks.stream(taskId, { after: options.after })) {
    if (options.json) term.line(jsonLine(event));
    else printer.print(event);
    if (event.id >= lastEventId) break;
  }
  return ExitCode.ok;
}
