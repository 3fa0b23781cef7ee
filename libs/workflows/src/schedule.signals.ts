import { defineSignal } from '@temporalio/workflow';

// The schedule clock workflow's signals, defined once: the Temporal schedule clock sends them, the
// workflow handles them. They carry a schedule id at most: the activity reads the stream afresh.

/** A schedule of the shard changed (created, its cron, timezone, pause, deletion): look at it now. */
export const scheduleChangedSignal = defineSignal<[scheduleId: string]>('schedule-changed');

/** Look at every schedule of the shard from the store (an API process started: it may have missed a change). */
export const scheduleRescanSignal = defineSignal('schedule-rescan');
