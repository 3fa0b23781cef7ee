import type { ScheduleState } from '@app/task-domain';
import { nextDueAt } from './cron-rules';

/** The public Schedule of docs/api.md "Schedules": secrets as names only, env as keys, as a task shows them. */
export function presentSchedule(s: ScheduleState) {
  return {
    id: s.id,
    cron: s.cron,
    timezone: s.timezone,
    task: {
      message: s.task.message,
      autoExecute: s.task.autoExecute,
      showInHistory: s.task.showInHistory,
      maxTokens: s.task.maxTokens ?? null,
      maxCostUsd: s.task.maxCostUsd ?? null,
      webhookUrl: s.task.webhookUrl ?? null,
      envKeys: Object.keys(s.task.env),
      secretNames: s.task.secretNames,
    },
    target: s.target ?? null,
    overlap: s.overlap,
    paused: s.paused,
    nextRunAt: nextDueAt(s)?.toISOString() ?? null,
    lastRunAt: s.lastRunAt ?? null,
    createdAt: s.createdAt,
    updatedAt: s.updatedAt,
  };
}
