// ─── Schedule commands ───────────────────────────────────────────────────────────────────────
// Pure: the clock (`at`) and the due time arrive in the command; computing due times from the
// cron expression is the firer's (it uses a cron library, which this domain does not load).

import { ConflictError, NotFoundError } from '@app/common/errors/app-error';
import type { Event } from '../task.events';
import type { ScheduleCreated, ScheduleEvent, ScheduleOverlap, ScheduleState } from './schedule.events';

type Command<Type extends string, Data> = Event<Type, Data>;

export type CreateSchedule = Command<'CreateSchedule', ScheduleCreated['data']>;
export type UpdateSchedule = Command<
  'UpdateSchedule',
  { readonly cron?: string; readonly timezone?: string; readonly overlap?: ScheduleOverlap; readonly paused?: boolean; readonly at: string }
>;
export type DeleteSchedule = Command<'DeleteSchedule', { readonly at: string }>;
/** Records what became of a due time: fired (a task started or a follow-up sent) or skipped. */
export type RecordScheduleRun = Command<
  'RecordScheduleRun',
  | { readonly dueAt: string; readonly at: string; readonly outcome: 'fired'; readonly taskId: string; readonly messageId?: string }
  | { readonly dueAt: string; readonly at: string; readonly outcome: 'skipped'; readonly reason: string }
>;
export type FailScheduleRun = Command<'FailScheduleRun', { readonly dueAt: string; readonly at: string; readonly reason: string }>;

export type ScheduleCommand = CreateSchedule | UpdateSchedule | DeleteSchedule | RecordScheduleRun | FailScheduleRun;

export class ScheduleAlreadyExistsError extends ConflictError {
  constructor(scheduleId: string) {
    super(`schedule ${scheduleId} already exists`);
    this.name = 'ScheduleAlreadyExistsError';
  }
}

/**
 * An empty list means there is nothing to record: a run for a due time already recorded (by this
 * firer or another), or a change that changes nothing.
 */
export function decideSchedule(command: ScheduleCommand, state: ScheduleState): ScheduleEvent[] {
  if (command.type === 'CreateSchedule') {
    if (state.exists) throw new ScheduleAlreadyExistsError(command.data.scheduleId);
    return [{ type: 'ScheduleCreated', data: command.data }];
  }
  if (!state.exists || state.deleted) throw new NotFoundError('schedule');
  switch (command.type) {
    case 'UpdateSchedule':
      return updateSchedule(command.data, state);
    case 'DeleteSchedule':
      return [{ type: 'ScheduleDeleted', data: { at: command.data.at } }];
    case 'RecordScheduleRun': {
      const d = command.data;
      // At most once per due time: only a due time later than every one recorded, and not one
      // from before the schedule was created, resumed or re-timed.
      if (state.paused || d.dueAt <= state.anchorAt || (state.lastDueAt !== undefined && d.dueAt <= state.lastDueAt)) return [];
      if (d.outcome === 'skipped') return [{ type: 'ScheduleSkipped', data: { dueAt: d.dueAt, at: d.at, reason: d.reason } }];
      return [
        {
          type: 'ScheduleFired',
          data: { dueAt: d.dueAt, firedAt: d.at, taskId: d.taskId, ...(d.messageId ? { messageId: d.messageId } : {}) },
        },
      ];
    }
    case 'FailScheduleRun': {
      const run = state.lastRun;
      if (!run || run.dueAt !== command.data.dueAt || run.outcome !== 'started') return [];
      return [{ type: 'ScheduleRunFailed', data: command.data }];
    }
    default: {
      const _: never = command;
      return _;
    }
  }
}

function updateSchedule(d: UpdateSchedule['data'], state: ScheduleState): ScheduleEvent[] {
  const events: ScheduleEvent[] = [];
  const cron = d.cron !== undefined && d.cron !== state.cron ? d.cron : undefined;
  const timezone = d.timezone !== undefined && d.timezone !== state.timezone ? d.timezone : undefined;
  const overlap = d.overlap !== undefined && d.overlap !== state.overlap ? d.overlap : undefined;
  if (cron !== undefined || timezone !== undefined || overlap !== undefined) {
    events.push({
      type: 'ScheduleUpdated',
      data: {
        ...(cron === undefined ? {} : { cron }),
        ...(timezone === undefined ? {} : { timezone }),
        ...(overlap ? { overlap } : {}),
        at: d.at,
      },
    });
  }
  if (d.paused === true && !state.paused) events.push({ type: 'SchedulePaused', data: { at: d.at } });
  if (d.paused === false && state.paused) events.push({ type: 'ScheduleResumed', data: { at: d.at } });
  return events;
}
