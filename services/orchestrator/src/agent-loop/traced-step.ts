import type { StepFunction } from '@app/runner';
import { ATTR, inSpan } from '@app/tracing';

/** Each step of a task's loop as an `agent.step` span: the task, its turn and what the step came to. */
export function traceStep(step: StepFunction): StepFunction {
  return (taskId, signal, turn) =>
    inSpan('agent.step', { attributes: { [ATTR.taskId]: taskId, ...(turn === undefined ? {} : { [ATTR.turn]: turn }) } }, async (span) => {
      const outcome = await step(taskId, signal, turn);
      span.setAttribute(ATTR.stepOutcome, typeof outcome === 'string' ? outcome : 'wait_until');
      return outcome;
    });
}
