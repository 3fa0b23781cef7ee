import type { ApprovalChoice } from './approval-choice';

// Loaded on the first question only: most commands ask none, and loading it costs a tenth of a second.
const clack = () => import('@clack/prompts');

// The questions `ats` asks in a terminal (never elsewhere: callers check Terminal.interactive).
// Ctrl-C at any of them answers `undefined`: the caller treats it as an interrupt.

export async function askApproval(toolLine: string): Promise<ApprovalChoice | undefined> {
  const { isCancel, select } = await clack();
  const answer = await select<ApprovalChoice>({
    message: `Allow ${toolLine}?`,
    options: [
      { value: 'once', label: 'Yes, once' },
      { value: 'always', label: 'Yes, always', hint: 'calls like this one run without asking' },
      { value: 'deny', label: 'No, deny' },
    ],
  });
  return isCancel(answer) ? undefined : answer;
}

export type InterruptAnswer = 'detach' | 'cancel';

export async function askInterrupt(taskId: string): Promise<InterruptAnswer> {
  const { isCancel, select } = await clack();
  const answer = await select<InterruptAnswer>({
    message: `Interrupted. What about ${taskId}?`,
    options: [
      { value: 'detach', label: 'Detach', hint: 'it keeps running; follow it again with ats logs --follow' },
      { value: 'cancel', label: 'Cancel the task' },
    ],
  });
  // A second Ctrl-C leaves the task alone: the safe choice.
  return isCancel(answer) ? 'detach' : answer;
}

/** A secret typed without echo (not even a mask: its length stays private too). */
export async function askSecret(name: string, message = `Value of secret ${name}`): Promise<string | undefined> {
  const { isCancel, password } = await clack();
  const answer = await password({ message, mask: '' });
  return isCancel(answer) ? undefined : answer;
}

export async function askText(message: string, initialValue: string): Promise<string | undefined> {
  const { isCancel, text } = await clack();
  const answer = await text({ message, initialValue });
  return isCancel(answer) ? undefined : answer;
}
