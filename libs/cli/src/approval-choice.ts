import type { ApprovalOutcome } from '@agentic-task-service/client';

/** The words a person types or picks, and the outcome the API takes for each. */
export const APPROVAL_CHOICES = { once: 'proceed_once', always: 'proceed_always', deny: 'cancel' } as const satisfies Record<
  string,
  ApprovalOutcome
>;

export type ApprovalChoice = keyof typeof APPROVAL_CHOICES;

export function isApprovalChoice(word: string): word is ApprovalChoice {
  return Object.hasOwn(APPROVAL_CHOICES, word);
}
