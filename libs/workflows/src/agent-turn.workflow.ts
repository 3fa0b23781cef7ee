import {
  ActivityCancellationType,
  ApplicationFailure,
  condition,
  continueAsNew,
  isCancellation,
  proxyActivities,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import type { AgentTurn, AgentTurnActivities, StepOutcome } from './activities.types';
import { wakeSignal } from './agent.signals';

// One workflow per turn of a task, with a stable id from the task id and the turn number
// (agentTurnWorkflowId). The Temporal runner starts it with signalWithStart, so each id has at
// most one open run to signal, the same one-loop-per-task guarantee the in-process runner keeps
// with its map of loops; the next turn (a follow-up) is a new workflow, so a task's history in
// Temporal is split by turn and stays small. A long turn still continues as new after
// STEPS_PER_RUN steps. The input is the task id and turn number only: the step activity re-reads
// the task's event stream, so messages and secrets never enter workflow inputs, results or history.
// Cancelling the task cancels its turn's workflow (Temporal cancellation): the step in flight
// sees its abort signal, and the workflow ends as cancelled.

/** Workflow ids start with this prefix (tests use one of their own). */
export const AGENT_WORKFLOW_ID_PREFIX = 'agent-';

export function agentTurnWorkflowId(prefix: string, { taskId, turn }: AgentTurn): string {
  return `${prefix}${taskId}-turn-${turn}`;
}

/** Steps of one run before it continues as new (each step adds about six history events). */
const STEPS_PER_RUN = 500;

const { step } = proxyActivities<AgentTurnActivities>({
  // A step is one model call or one tool run (TOOL_TIMEOUT_MS defaults to 10 minutes).
  startToCloseTimeout: '30 minutes',
  // The activity heartbeats on a timer, so a silent step means a dead worker: retried elsewhere.
  heartbeatTimeout: '10 seconds',
  // A cancelled turn ends only once its step has stopped: nothing of it runs after.
  cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
  // Like the in-process runner: a failing step is retried with backoff a few times, then the run
  // fails (StepFailed, visible to operators) and the task waits for its next notify or a restart.
  retry: { initialInterval: '400ms', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 6 },
});

async function runStep(input: AgentTurn): Promise<StepOutcome> {
  try {
    return await step(input);
  } catch (error) {
    if (isCancellation(error)) throw error; // the turn was cancelled: so is this workflow
    const message = `the step kept failing for task ${input.taskId} turn ${input.turn}`;
    throw ApplicationFailure.create({ type: 'StepFailed', message, nonRetryable: true, cause: error as Error });
  }
}

export async function agentTurnWorkflow(input: AgentTurn): Promise<void> {
  /** Wake signals received, and how many of them the current step already answers. */
  let wakes = 0;
  let answered = 0;
  const woken = () => wakes > answered;
  setHandler(wakeSignal, () => {
    wakes++;
  });

  // Signals buffered before the run began are delivered by setHandler above. The first step
  // answers the wake that started this run (signalWithStart); any other wake makes the loop look
  // again, as a notify that finds the in-process runner's loop already there marks it dirty.
  answered = Math.min(wakes, 1);
  for (let steps = 0; ; steps++) {
    if (steps >= STEPS_PER_RUN || (steps > 0 && workflowInfo().continueAsNewSuggested)) {
      await continueAsNew<typeof agentTurnWorkflow>(input);
    }
    // 'idle' also when the task has moved on to another turn: that turn has its own workflow.
    const outcome = await runStep(input);
    if (outcome === 'idle' && !woken()) return;
    if (outcome === 'wait') {
      await condition(woken);
    } else if (typeof outcome === 'object' && !woken()) {
      // Workflow time: Date.now() is the time of the current workflow task, replayed identically.
      // An approval's deadline comes here: the turn sleeps on a durable timer until it, or a wake.
      const ms = outcome.waitUntil - Date.now();
      if (ms > 0) await condition(woken, ms);
    }
    // Every wake so far is answered by the next step: it reads the task's stream afresh.
    answered = wakes;
  }
}
