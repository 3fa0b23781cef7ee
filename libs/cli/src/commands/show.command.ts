import { budgetText } from '../budget-text';
import { bytes, callLine, usageText } from '../event-printer';
import type { CliContext } from '../context';
import { ExitCode } from '../exit-codes';
import { jsonLine, safeData, safeLine, safeText } from '../untrusted-text';

/** `ats show ID`: the task's state, its messages, pending approvals, usage and artifacts. */
export async function showCommand(ctx: CliContext, taskId: string, options: { json: boolean }): Promise<ExitCode> {
  const { term } = ctx;
  const ats = await ctx.client();
  const untrusted = await ats.tasks.get(taskId);
  if (options.json) {
    term.line(jsonLine(untrusted));
    return ExitCode.ok;
  }
  const task = safeData(untrusted);
  const artifacts = safeData(await ats.artifacts.list(taskId));
  const c = term.colors;
  term.line(`${c.bold(safeLine(task.id))}  ${safeLine(task.status)}${task.error ? `: ${safeLine(task.error)}` : ''}`);
  term.line(
    c.dim(`created ${task.createdAt}, turn ${task.turn}, ${task.autoExecute ? 'tools run without asking' : 'asks before each tool call'}`),
  );
  for (const message of task.messages) term.line(`${c.cyan('›')} ${safeText(message.text)}`);
  for (const pending of task.pendingApprovals) {
    term.line(`${c.yellow('awaiting approval')} ${safeLine(pending.callId)} ${c.bold(callLine(pending.toolName, pending.args))}`);
    term.line(c.dim(`  ats approve ${task.id} ${safeLine(pending.callId)} once|always|deny`));
  }
  const budget = budgetText(task);
  term.line(`usage: ${usageText(task.usage)}${budget ? `; budget ${budget}` : ''}`);
  if (task.files.length > 0) term.line(`files: ${task.files.map((file) => safeLine(file.name)).join(', ')}`);
  if (task.envKeys.length > 0) term.line(`env: ${task.envKeys.map(safeLine).join(', ')}`);
  if (task.secretNames.length > 0) term.line(`secrets: ${task.secretNames.map(safeLine).join(', ')}`);
  if (artifacts.length > 0) {
    term.line('artifacts:');
    for (const file of artifacts) term.line(`  ${safeLine(file.path)} ${c.dim(`(${bytes(file.size)})`)}`);
  }
  return ExitCode.ok;
}
