import type { StepOutcome } from '../../runner/src/durable-runner.port';

/**
 * The activities the agent task workflow calls. The workflow only sees this type; the Temporal
 * runner's `createActivities` implements it around the agent loop's step function.
 */
export interface AgentTaskActivities {
  step(taskId: string): Promise<StepOutcome>;
}
