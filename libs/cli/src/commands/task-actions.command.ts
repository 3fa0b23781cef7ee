import type { ApprovalChoice } from '../approval-choice';
import { APPROVAL_CHOICES } from '../approval-choice';
import type { CliContext } from '../context';
import { ExitCode } from '../exit-codes';
import { jsonLine, safeData, safeLine } from '../untrusted-text';

export interface SendOptions {
  readonly json: boolean;
  readonly ifRunning?: 'interrupt' | 'rollback' | 'reject';
  readonly maxTokens?: number;
  readonly maxCost?: number;
}

/**
 * `ats send ID "<message>" [--interrupt|--rollback|--reject] [--max-tokens N] [--max-cost USD]`: a
 * follow-up in the same workspace; a budget given replaces the task's from now on.
 */
export async function sendCommand(ctx: CliContext, taskId: string, message: string, options: SendOptions): Promise<ExitCode> {
  const request = {
    message,
    ...(options.ifRunning === undefined ? {} : { ifRunning: options.ifRunning }),
    ...(options.maxTokens === undefined ? {} : { maxTokens: options.maxTokens }),
    ...(options.maxCost === undefined ? {} : { maxCostUsd: options.maxCost }),
  };
  const accepted = await (await ctx.client()).tasks.sendMessage(taskId, request);
  if (options.json) {
    ctx.term.line(jsonLine(accepted));
    return ExitCode.ok;
  }
  const { messageId, status } = safeData(accepted);
  ctx.term.line(`${safeLine(messageId)} sent, task ${safeLine(status)}; follow it with: ats logs ${safeLine(taskId)} --follow`);
  return ExitCode.ok;
}

/** `ats approve ID CALL once|always|deny`. */
export async function approveCommand(ctx: CliContext, taskId: string, callId: string, choice: ApprovalChoice): Promise<ExitCode> {
  const decision = safeData(await (await ctx.client()).tasks.approve(taskId, callId, APPROVAL_CHOICES[choice]));
  ctx.term.line(`${safeLine(decision.callId)} ${safeLine(decision.outcome)} (${decision.approved === true ? 'approved' : 'denied'})`);
  return ExitCode.ok;
}

/** `ats cancel ID`: stops the running turn and drops queued follow-ups. */
export async function cancelCommand(ctx: CliContext, taskId: string): Promise<ExitCode> {
  const { id, status } = safeData(await (await ctx.client()).tasks.cancel(taskId));
  ctx.term.line(`${safeLine(id)} ${safeLine(status)}`);
  return ExitCode.ok;
}
