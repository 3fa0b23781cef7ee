import {
  ActivityCancellationType,
  ApplicationFailure,
  CancellationScope,
  condition,
  continueAsNew,
  isCancellation,
  proxyActivities,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import type { StepOutcome } from '../../runner/src/durable-runner.port';
import type { AgentTaskActivities } from './activities.types';
import { abortStepSignal, wakeSignal } from './agent.signals';

// One workflow per task, not per turn: the DurableRunner port's notify() and abort() address a
// task, so a fixed id (`agent-<taskId>`, started with signalWithStart) gives exactly one open
// loop per task to signal, the same guarantee the in-process runner keeps with its map of loops.
// A task lives for many turns and steps, so each run continues as new after STEPS_PER_RUN steps
// to keep its history bounded. The input is the task id only: the step activity re-reads the
// task's event stream, so messages and secrets never enter workflow inputs, results or history.

/** Workflow ids are this prefix plus the task id. */
export const AGENT_TASK_WORKFLOW_ID_PREFIX = 'agent-';

/** Steps of one run before it continues as new (each step adds about six history events). */
const STEPS_PER_RUN = 500;

const { step } = proxyActivities<AgentTaskActivities>({
  // A step is one model call or one tool run (TOOL_TIMEOUT_MS defaults to 10 minutes).
  startToCloseTimeout: '30 minutes',
  // The activity heartbeats on a timer, so a silent step means a dead worker: retried elsewhere.
  heartbeatTimeout: '10 seconds',
  // An aborted step must finish before the next one starts: one step at a time per task.
  cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
  // Like the in-process runner: a failing step is retried with backoff a few times, then the run
  // fails (StepFailed, visible to operators) and the task waits for its next notify or a restart.
  retry: { initialInterval: '400ms', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 6 },
});

export async function agentTaskWorkflow(taskId: string): Promise<void> {
  /** Wake signals received, and how many of them the current step already answers. */
  let wakes = 0;
  let answered = 0;
  const woken = () => wakes > answered;
  let inFlight: CancellationScope | undefined;
  setHandler(wakeSignal, () => {
    wakes++;
  });
  // An abort when no step is in flight has nothing to stop: the next step reads the task afresh.
  setHandler(abortStepSignal, () => inFlight?.cancel());

  const runStep = async (): Promise<StepOutcome> => {
    const scope = new CancellationScope();
    inFlight = scope;
    try {
      return await scope.run(() => step(taskId));
    } catch (error) {
      // Aborted: look again, like the in-process runner does after an aborted step.
      if (isCancellation(error)) return 'continue';
      throw ApplicationFailure.create({ type: 'StepFailed', message: `the step kept failing for task ${taskId}`, nonRetryable: true, cause: error as Error });
    } finally {
      inFlight = undefined;
    }
  };

  // Signals buffered before the run began are delivered by setHandler above. The first step
  // answers the wake that started this run (signalWithStart); any other wake makes the loop look
  // again, as a notify that finds the in-process runner's loop already there marks it dirty.
  answered = Math.min(wakes, 1);
  for (let steps = 0; ; steps++) {
    if (steps >= STEPS_PER_RUN || (steps > 0 && workflowInfo().continueAsNewSuggested)) {
      await continueAsNew<typeof agentTaskWorkflow>(taskId);
    }
    const outcome = await runStep();
    if (outcome === 'idle' && !woken()) return; // the next notify starts a new run
    if (outcome === 'wait') {
      await condition(woken);
    } else if (typeof outcome === 'object' && !woken()) {
      // Workflow time: Date.now() is the time of the current workflow task, replayed identically.
      const ms = outcome.waitUntil - Date.now();
      if (ms > 0) await condition(woken, ms);
    }
    // Every wake so far is answered by the next step: it reads the task's stream afresh.
    answered = wakes;
  }
}
