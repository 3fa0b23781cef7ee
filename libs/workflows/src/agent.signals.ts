import { defineSignal } from '@temporalio/workflow';

// The agent turn workflow's signals, defined once: the Temporal runner sends them, the workflow
// handles them. None carries data, so nothing a task holds (messages, secrets) enters history.
// Cancelling a turn is not a signal: it is Temporal's own workflow cancellation.

/** Something changed for the task (DurableRunner.notify): the loop looks again. */
export const wakeSignal = defineSignal('wake');
