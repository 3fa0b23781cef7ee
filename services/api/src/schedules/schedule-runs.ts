import type { StoredEvent } from '@app/event-store';
import { toScheduleEvent } from './schedule-book';

export interface ScheduleRun {
  readonly dueAt: string;
  readonly firedAt?: string;
  readonly taskId?: string;
  readonly outcome: 'started' | 'skipped' | 'failed';
  readonly reason?: string;
  /** The stream revision that recorded it: the cursor of the runs list. */
  readonly revision: number;
}

/** A schedule's runs from its stream, oldest first: each due time fired or skipped, a failure folded into its fired run. */
export function scheduleRuns(events: readonly StoredEvent[]): ScheduleRun[] {
  const runs: ScheduleRun[] = [];
  for (const stored of events) {
    const event = toScheduleEvent(stored);
    if (event.type === 'ScheduleFired') {
      const { dueAt, firedAt, taskId } = event.data;
      runs.push({ dueAt, firedAt, taskId, outcome: 'started', revision: stored.revision });
    } else if (event.type === 'ScheduleSkipped') {
      runs.push({ dueAt: event.data.dueAt, outcome: 'skipped', reason: event.data.reason, revision: stored.revision });
    } else if (event.type === 'ScheduleRunFailed') {
      let i = runs.length - 1;
      while (i >= 0 && runs[i].dueAt !== event.data.dueAt) i--;
      if (i >= 0) runs[i] = { ...runs[i], outcome: 'failed', reason: event.data.reason };
    }
  }
  return runs;
}
