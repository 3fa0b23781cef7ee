import type { StepOutcome } from '../../runner/src/durable-runner.port';

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
