import { NotFoundError } from '@app/common';
import { DeciderSpecification } from '@app/common/testing/decider-spec';
import type { ScheduleCommand } from './schedule.decider';
import { ScheduleAlreadyExistsError, decideSchedule } from './schedule.decider';
import type { ScheduleCreated, ScheduleEvent, ScheduleState } from './schedule.events';
import { evolveSchedule, initialScheduleState } from './schedule.events';

const spec = DeciderSpecification.for<ScheduleState, ScheduleCommand, ScheduleEvent>({
  decide: decideSchedule,
  evolve: evolveSchedule,
  initialState: initialScheduleState,
});

const created: ScheduleCreated = {
  type: 'ScheduleCreated',
  data: {
    scheduleId: 'sched_1',
    tenantId: 't',
    cron: '* * * * *',
    timezone: 'UTC',
    task: { message: 'hi', autoExecute: true, showInHistory: true, env: {}, secretNames: [] },
    overlap: 'skip',
    paused: false,
    at: '2026-01-01T00:00:00.000Z',
  },
};
const fired = (dueAt: string): ScheduleEvent => ({ type: 'ScheduleFired', data: { dueAt, firedAt: dueAt, taskId: 'task_a' } });
const fire = (dueAt: string): ScheduleCommand => ({
  type: 'RecordScheduleRun',
  data: { dueAt, at: dueAt, outcome: 'fired', taskId: 'task_a' },
});

describe('schedule decider', () => {
  it('creates a schedule once', () => {
    spec.given([]).when({ type: 'CreateSchedule', data: created.data }).then([created]);
    spec.given([created]).when({ type: 'CreateSchedule', data: created.data }).thenThrows(ScheduleAlreadyExistsError);
  });

  it('records a due time once: a second firer of the same due time records nothing', () => {
    spec
      .given([created])
      .when(fire('2026-01-01T00:01:00.000Z'))
      .then([fired('2026-01-01T00:01:00.000Z')]);
    spec
      .given([created, fired('2026-01-01T00:01:00.000Z')])
      .when(fire('2026-01-01T00:01:00.000Z'))
      .thenNothing();
    spec
      .given([created, fired('2026-01-01T00:02:00.000Z')])
      .when(fire('2026-01-01T00:01:00.000Z'))
      .thenNothing();
  });

  it('records no run while paused, nor one due before the schedule was resumed', () => {
    const paused: ScheduleEvent = { type: 'SchedulePaused', data: { at: '2026-01-01T00:00:30.000Z' } };
    spec.given([created, paused]).when(fire('2026-01-01T00:01:00.000Z')).thenNothing();
    const resumed: ScheduleEvent = { type: 'ScheduleResumed', data: { at: '2026-01-01T00:05:30.000Z' } };
    spec.given([created, paused, resumed]).when(fire('2026-01-01T00:05:00.000Z')).thenNothing();
    spec
      .given([created, paused, resumed])
      .when(fire('2026-01-01T00:06:00.000Z'))
      .then([fired('2026-01-01T00:06:00.000Z')]);
  });

  it('pauses, resumes and updates only what changes', () => {
    const at = '2026-01-02T00:00:00.000Z';
    spec
      .given([created])
      .when({ type: 'UpdateSchedule', data: { paused: true, cron: '*/5 * * * *', overlap: 'skip', at } })
      .then([
        { type: 'ScheduleUpdated', data: { cron: '*/5 * * * *', at } },
        { type: 'SchedulePaused', data: { at } },
      ]);
    spec
      .given([created])
      .when({ type: 'UpdateSchedule', data: { paused: false, at } })
      .thenNothing();
  });

  it('answers a deleted schedule as not found', () => {
    const deleted: ScheduleEvent = { type: 'ScheduleDeleted', data: { at: '2026-01-01T00:00:01.000Z' } };
    spec.given([created, deleted]).when(fire('2026-01-01T00:01:00.000Z')).thenThrows(NotFoundError);
    spec
      .given([])
      .when({ type: 'DeleteSchedule', data: { at: 'x' } })
      .thenThrows(NotFoundError);
  });

  it('fails only the fired run it names', () => {
    const dueAt = '2026-01-01T00:01:00.000Z';
    const fail: ScheduleCommand = { type: 'FailScheduleRun', data: { dueAt, at: dueAt, reason: 'target gone' } };
    spec
      .given([created, fired(dueAt)])
      .when(fail)
      .then([{ type: 'ScheduleRunFailed', data: { dueAt, at: dueAt, reason: 'target gone' } }]);
    spec.given([created]).when(fail).thenNothing();
  });
});
