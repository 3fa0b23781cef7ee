import { defineSignal } from '@temporalio/workflow';

// The agent task workflow's signals, defined once: the Temporal runner sends them, the workflow
// handles them. Neither carries data, so nothing a task holds (messages, secrets) enters history.

/** Something changed for the task (DurableRunner.notify): the loop looks again. */
export const wakeSignal = defineSignal('wake');

/** Abort the task's in-flight step (DurableRunner.abort). */
export const abortStepSignal = defineSignal('abort');
