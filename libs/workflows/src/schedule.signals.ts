import { defineSignal } from '@temporalio/workflow';

// The schedule workflow's signal, defined once: the Temporal schedule clock sends it, the workflow
// handles it. It carries nothing: the workflow's activity reads the schedule's stream afresh.

/** The schedule changed (its cron, timezone, pause, deletion): look at it again now. */
export const scheduleChangedSignal = defineSignal('schedule-changed');
