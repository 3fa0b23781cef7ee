import { ValidationError } from '@app/common';

/**
 * TASK_MAX_TOKENS_CAP on a create's or follow-up's `maxTokens`. Checked by the handlers, not by
 * the DTO's decorators: the cap is the operator's setting, known only at run time.
 */
export function checkTokenBudgetCap(maxTokens: number | undefined, cap: number | undefined): void {
  if (maxTokens !== undefined && cap !== undefined && maxTokens > cap) {
    throw new ValidationError(`maxTokens must be at most ${cap}, the cap this service allows (TASK_MAX_TOKENS_CAP)`);
  }
}
