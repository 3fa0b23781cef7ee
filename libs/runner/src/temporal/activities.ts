import { ApplicationFailure, CancelledFailure, Context } from '@temporalio/activity';
import type { AgentTurn, AgentTurnActivities } from '@app/workflows';
import type { StepFunction } from '../durable-runner.port';

export interface ActivityDeps {
  readonly step: StepFunction;
  /** Gets a failed step's error in full; Temporal only ever sees its class name. */
  readonly onError?: (taskId: string, error: unknown) => void;
  /** How often a running step heartbeats; an abort can only reach it through a heartbeat. */
  readonly heartbeatIntervalMs?: number;
  /**
   * Steps that end in 'continue' run on inside the same activity for up to this long. Every
   * activity costs a round trip through the Temporal server (tens of ms); a turn of a dozen tool
   * calls is dozens of steps. Safe to batch: each step re-reads the task's stream, so a retried
   * activity resumes after the last step that was recorded, never redoing one.
   */
  readonly maxBatchMs?: number;
  /** True once the worker shuts down: a batch ends after its running step, handing the rest back. */
  readonly stopping?: () => boolean;
}

/** Default for ActivityDeps.maxBatchMs. */
export const STEP_BATCH_MS = 10_000;

export function createActivities({
  step,
  onError = () => undefined,
  heartbeatIntervalMs = 1000,
  maxBatchMs = STEP_BATCH_MS,
  stopping = () => false,
}: ActivityDeps): AgentTurnActivities {
  return {
    async step({ taskId, turn }: AgentTurn) {
      const context = Context.current();
      context.heartbeat();
      const beat = setInterval(() => context.heartbeat(), heartbeatIntervalMs);
      try {
        const startedAt = Date.now();
        for (;;) {
          const outcome = await step(taskId, context.cancellationSignal, turn);
          // The turn was cancelled while the step ran: report it as such, not as a result.
          if (context.cancellationSignal.aborted) throw new CancelledFailure('step aborted');
          if (outcome !== 'continue' || stopping() || Date.now() - startedAt >= maxBatchMs) return outcome;
        }
      } catch (error) {
        if (context.cancellationSignal.aborted) throw new CancelledFailure('step aborted');
        onError(taskId, error);
        // Error text can quote anything the step touched (tool output, a secret in a command), and
        // a failure is kept in the workflow's history: only the error's class name goes there.
        const type = error instanceof Error ? error.name : typeof error;
        throw ApplicationFailure.create({ type, message: `step failed with ${type} (details in the worker's log)` });
      } finally {
        clearInterval(beat);
      }
    },
  };
}
