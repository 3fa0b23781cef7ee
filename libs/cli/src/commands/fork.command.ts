import type { ApprovalChoice } from '../approval-choice';
import type { CliContext } from '../context';
import { ExitCode } from '../exit-codes';
import { followTask } from '../follow-task';
import { jsonLine, safeData, safeLine } from '../untrusted-text';
import { approvalPolicy } from './run.command';

export interface ForkOptions {
  readonly after: number;
  readonly message?: string;
  readonly autoExecute?: boolean;
  readonly detach: boolean;
  readonly approve?: ApprovalChoice;
  readonly json: boolean;
}

/** A fork with a turn to run (after a message or a result, or a done with --message) is followed; one at rest is not. */
const RUNNING = new Set(['pending', 'running', 'awaiting_approval']);

/**
 * `ats fork ID --after N`: a new task from the task's events up to N, going on from there. Prints
 * the fork's id and status, then follows its turn from the `forked` event on as `run` does
 * (unless --detach).
 */
export async function forkCommand(ctx: CliContext, taskId: string, options: ForkOptions): Promise<ExitCode> {
  const { term } = ctx;
  const ats = await ctx.client();
  const forked = await ats.tasks.fork(taskId, {
    afterEventId: options.after,
    ...(options.message === undefined ? {} : { message: options.message }),
    ...(options.autoExecute === undefined ? {} : { autoExecute: options.autoExecute }),
  });
  const { id, status } = safeData(forked);
  if (options.json) term.line(jsonLine(forked));
  else
    term.line(`${safeLine(id)} ${safeLine(status)} ${term.colors.dim(`(forked from ${safeLine(taskId)} after event ${options.after})`)}`);
  if (options.detach || !RUNNING.has(forked.status)) return ExitCode.ok;
  if (!options.json) term.line(term.colors.dim(`follow it later with: ats logs ${safeLine(id)} --follow`));
  return followTask(ats, term, forked.id, { after: options.after, json: options.json, approvals: approvalPolicy(ctx, options.approve) });
}
