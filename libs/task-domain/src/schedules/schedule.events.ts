// ─── Schedule events ─────────────────────────────────────────────────────────────────────────
// A schedule's history is the stream `schedule-<id>` of these events (docs/api.md "Schedules").
// Each due time is recorded once, by `ScheduleFired` or `ScheduleSkipped`, appended with the
// stream's expected revision: two firers (processes, instances) cannot both record it.

import type { Event, SealedSecrets } from '../task.events';

export type ScheduleOverlap = 'skip' | 'enqueue';

/** What each run starts: the create-task fields, secrets sealed (bound to the schedule's id). */
export interface ScheduleTaskTemplate {
  readonly message: string;
  readonly autoExecute: boolean;
  readonly showInHistory: boolean;
  readonly env: Readonly<Record<string, string>>;
  /** Names only: values live in `sealedSecrets`, never in plain text. */
  readonly secretNames: readonly string[];
  readonly sealedSecrets?: SealedSecrets;
  readonly maxTokens?: number;
  /** The cost budget of each run's task (USD), or of each follow-up's turn with a target. */
  readonly maxCostUsd?: number;
  readonly webhookUrl?: string;
}

export type ScheduleCreated = Event<
  'ScheduleCreated',
  {
    readonly scheduleId: string;
    readonly tenantId: string;
    readonly cron: string;
    readonly timezone: string;
    readonly task: ScheduleTaskTemplate;
    /** A task id: each run is a follow-up into it instead of a new task. */
    readonly target?: string;
    readonly overlap: ScheduleOverlap;
    readonly paused: boolean;
    /** ISO time: due times after it are this schedule's. */
    readonly at: string;
  }
>;

/** Cron, timezone or overlap changed; due times are counted anew from `at` when cron or timezone did. */
export type ScheduleUpdated = Event<
  'ScheduleUpdated',
  { readonly cron?: string; readonly timezone?: string; readonly overlap?: ScheduleOverlap; readonly at: string }
>;
export type SchedulePaused = Event<'SchedulePaused', { readonly at: string }>;
/** Due times between the pause and `at` are neither fired nor recorded. */
export type ScheduleResumed = Event<'ScheduleResumed', { readonly at: string }>;
export type ScheduleDeleted = Event<'ScheduleDeleted', { readonly at: string }>;

/** The due time was claimed: `taskId` is the task created for it (or the target followed up). */
export type ScheduleFired = Event<
  'ScheduleFired',
  { readonly dueAt: string; readonly firedAt: string; readonly taskId: string; readonly messageId?: string }
>;
export type ScheduleSkipped = Event<'ScheduleSkipped', { readonly dueAt: string; readonly at: string; readonly reason: string }>;
/** A fired run's task could not be started (the target is gone, a setting refused it): said once, never retried. */
export type ScheduleRunFailed = Event<'ScheduleRunFailed', { readonly dueAt: string; readonly at: string; readonly reason: string }>;

export type ScheduleEvent =
  | ScheduleCreated
  | ScheduleUpdated
  | SchedulePaused
  | ScheduleResumed
  | ScheduleDeleted
  | ScheduleFired
  | ScheduleSkipped
  | ScheduleRunFailed;

export const SCHEDULE_EVENT_SCHEMA_VERSIONS: Record<ScheduleEvent['type'], number> = {
  ScheduleCreated: 1,
  ScheduleUpdated: 1,
  SchedulePaused: 1,
  ScheduleResumed: 1,
  ScheduleDeleted: 1,
  ScheduleFired: 1,
  ScheduleSkipped: 1,
  ScheduleRunFailed: 1,
};

const SCHEDULE_STREAM_PREFIX = 'schedule-';
export const scheduleStreamId = (scheduleId: string): string => `${SCHEDULE_STREAM_PREFIX}${scheduleId}`;
export const scheduleIdOf = (streamId: string): string | undefined =>
  streamId.startsWith(SCHEDULE_STREAM_PREFIX) ? streamId.slice(SCHEDULE_STREAM_PREFIX.length) : undefined;

// ─── State ───────────────────────────────────────────────────────────────────────────────────

export interface LastRun {
  readonly dueAt: string;
  readonly taskId?: string;
  readonly messageId?: string;
  readonly outcome: 'started' | 'skipped' | 'failed';
}

export interface ScheduleState {
  readonly exists: boolean;
  readonly id: string;
  readonly tenantId: string;
  readonly cron: string;
  readonly timezone: string;
  readonly task: ScheduleTaskTemplate;
  readonly target?: string;
  readonly overlap: ScheduleOverlap;
  readonly paused: boolean;
  readonly deleted: boolean;
  /** Due times strictly after max(anchorAt, lastDueAt) are still to come. */
  readonly anchorAt: string;
  readonly lastDueAt?: string;
  /** When the last run was recorded (fired, skipped or failed). */
  readonly lastRunAt?: string;
  readonly lastRun?: LastRun;
  /** The task of the last run that fired (runs skipped since do not hide it: overlap looks at it). */
  readonly lastTaskId?: string;
  readonly createdAt: string;
  readonly updatedAt: string;
  readonly revision: number;
}

export const initialScheduleState = (): ScheduleState => ({
  exists: false,
  id: '',
  tenantId: '',
  cron: '',
  timezone: 'UTC',
  task: { message: '', autoExecute: true, showInHistory: true, env: {}, secretNames: [] },
  overlap: 'skip',
  paused: false,
  deleted: false,
  anchorAt: '',
  createdAt: '',
  updatedAt: '',
  revision: 0,
});

export function evolveSchedule(state: ScheduleState, event: ScheduleEvent): ScheduleState {
  const s = { ...state, revision: state.revision + 1 };
  switch (event.type) {
    case 'ScheduleCreated': {
      const d = event.data;
      return {
        ...s,
        exists: true,
        id: d.scheduleId,
        tenantId: d.tenantId,
        cron: d.cron,
        timezone: d.timezone,
        task: d.task,
        ...(d.target === undefined ? {} : { target: d.target }),
        overlap: d.overlap,
        paused: d.paused,
        anchorAt: d.at,
        createdAt: d.at,
        updatedAt: d.at,
      };
    }
    case 'ScheduleUpdated': {
      const { cron, timezone, overlap, at } = event.data;
      const recounted = cron !== undefined || timezone !== undefined;
      return {
        ...s,
        cron: cron ?? s.cron,
        timezone: timezone ?? s.timezone,
        overlap: overlap ?? s.overlap,
        updatedAt: at,
        ...(recounted ? { anchorAt: at } : {}),
      };
    }
    case 'SchedulePaused':
      return { ...s, paused: true, updatedAt: event.data.at };
    case 'ScheduleResumed':
      return { ...s, paused: false, anchorAt: event.data.at, updatedAt: event.data.at };
    case 'ScheduleDeleted':
      return { ...s, deleted: true, updatedAt: event.data.at };
    case 'ScheduleFired': {
      const { dueAt, firedAt, taskId, messageId } = event.data;
      return {
        ...s,
        lastDueAt: dueAt,
        lastRunAt: firedAt,
        lastTaskId: taskId,
        lastRun: { dueAt, taskId, ...(messageId ? { messageId } : {}), outcome: 'started' },
      };
    }
    case 'ScheduleSkipped':
      return { ...s, lastDueAt: event.data.dueAt, lastRunAt: event.data.at, lastRun: { dueAt: event.data.dueAt, outcome: 'skipped' } };
    case 'ScheduleRunFailed': {
      // The fired run it ends keeps its task id (the overlap check looks at it).
      const run = s.lastRun?.dueAt === event.data.dueAt ? s.lastRun : { dueAt: event.data.dueAt };
      return { ...s, lastRun: { ...run, outcome: 'failed' } };
    }
    default: {
      const _: never = event;
      return _;
    }
  }
}
