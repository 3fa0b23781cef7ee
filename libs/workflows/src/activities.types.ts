/** What one step of a task's agent loop reported. */
export type StepOutcome =
  /** Made progress; run the next step. */
  | 'continue'
  /** Waiting on something outside (an approval, a tool in flight); a notify() wakes it. */
  | 'wait'
  /** Nothing to do until the task gets new work. */
  | 'idle'
  /** Like 'wait', but look again at this time (epoch ms) even if nothing notifies: a deadline. */
  | { readonly waitUntil: number };

/** What an agent turn workflow is about: the task, and which of its turns. */
export interface AgentTurn {
  readonly taskId: string;
  readonly turn: number;
}

/**
 * The activities the agent turn workflow calls. The workflow only sees this type; the Temporal
 * runner's `createActivities` implements it around the agent loop's step function.
 */
export interface AgentTurnActivities {
  step(turn: AgentTurn): Promise<StepOutcome>;
}
