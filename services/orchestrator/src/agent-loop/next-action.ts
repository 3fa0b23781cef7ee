import type { ExistingTask, TaskState } from '@app/task-domain';
import { openCallsOf } from '@app/task-domain';

// What the agent loop must do next for a task, decided from its state alone. Because the state is
// folded from the event stream, a restarted runner asks the same question and carries on where
// the last one stopped.

export type NextAction =
  | { readonly kind: 'idle' }
  | { readonly kind: 'start_turn' }
  /** A fork's turn that was running at its fork point waits to be admitted again. */
  | { readonly kind: 'resume_turn'; readonly messageId: string }
  | { readonly kind: 'call_model'; readonly turn: number; readonly step: number }
  /** The next step would call the model, but the task has spent its maxTokens or maxCostUsd: the turn fails, no call is made. */
  | { readonly kind: 'budget_reached'; readonly turn: number; readonly error: string }
  | { readonly kind: 'await_approval'; readonly callId: string }
  | { readonly kind: 'execute_tool'; readonly callId: string }
  /** Started before a crash and never finished: report it, never run it again. */
  | { readonly kind: 'interrupt_tool'; readonly callId: string }
  | { readonly kind: 'tool_in_flight'; readonly callId: string };

export function nextAction(state: TaskState, inFlightCallIds: ReadonlySet<string>): NextAction {
  if (!state.exists) return { kind: 'idle' };
  const s: ExistingTask = state;
  if (s.status === 'pending' && s.resuming) return { kind: 'resume_turn', messageId: s.resuming.messageId };
  if (s.status === 'pending') return s.queued.length > 0 ? { kind: 'start_turn' } : { kind: 'idle' };
  if (s.status !== 'running' && s.status !== 'awaiting_approval') return { kind: 'idle' };
  const next = openCallsOf(s).find((c) => c.phase !== 'finished');
  if (!next) {
    if (s.maxTokens !== undefined && s.usage.totalTokens >= s.maxTokens) {
      return { kind: 'budget_reached', turn: s.turn, error: tokenBudgetError(s.usage.totalTokens, s.maxTokens) };
    }
    if (s.maxCostUsd !== undefined && s.pricedCostUsd >= s.maxCostUsd) {
      return { kind: 'budget_reached', turn: s.turn, error: costBudgetError(s.pricedCostUsd, s.maxCostUsd) };
    }
    return { kind: 'call_model', turn: s.turn, step: s.step + 1 };
  }
  switch (next.phase) {
    case 'awaiting_approval':
      return { kind: 'await_approval', callId: next.callId };
    case 'approved':
      return { kind: 'execute_tool', callId: next.callId };
    case 'running':
      return inFlightCallIds.has(next.callId)
        ? { kind: 'tool_in_flight', callId: next.callId }
        : { kind: 'interrupt_tool', callId: next.callId };
    default:
      throw new Error(`unexpected phase ${next.phase}`);
  }
}

export const INTERRUPTED_OUTPUT =
  'Interrupted: the service stopped while this tool was running. It was not run again; check the workspace before retrying.';

/** Checked before every model call, so one call may take the total past the budget; none starts after. */
export const tokenBudgetError = (used: number, maxTokens: number): string =>
  `Token budget reached: the task has used ${used} of its ${maxTokens} tokens (maxTokens), so no further model call is made. Send a follow-up with a higher maxTokens to continue.`;

/** Like the token budget: checked before every model call; only calls with a price count (docs/operations/model-providers.md "Prices and cost"). */
export const costBudgetError = (usedUsd: number, maxCostUsd: number): string =>
  `Cost budget reached: the task's model calls have cost ${usedUsd} USD of its ${maxCostUsd} USD (maxCostUsd), so no further model call is made. Send a follow-up with a higher maxCostUsd to continue.`;
