import type { ScheduleRun } from '@agentic-task-service/client';
import type { Colors } from './terminal';
import { safeData, safeLine } from './untrusted-text';

const OUTCOME_WIDTH = 'started'.length;

/**
 * One run of a schedule (`ats schedule runs`, `ats schedule show`): its due time on the wall clock
 * of the schedule's zone, the outcome padded so the last column lines up, then the task a started
 * run created or why a run was skipped or failed. A failed run's task id is left out: the run
 * could not start that task, or send it the follow-up (`--json` keeps it).
 */
export function runLine(untrusted: ScheduleRun, timeZone: string, colors: Colors): string {
  const run = safeData(untrusted);
  const outcome = safeLine(run.outcome);
  const paint = outcome === 'started' ? colors.green : outcome === 'failed' ? colors.red : colors.yellow;
  const last = safeLine((outcome === 'started' ? run.taskId : run.reason) ?? '');
  const line = `${wallClock(run.dueAt, timeZone)}  ${paint(outcome)}`;
  if (last === '') return line;
  return `${line}${' '.repeat(Math.max(0, OUTCOME_WIDTH - outcome.length))}  ${outcome === 'started' ? last : colors.dim(last)}`;
}

/**
 * An instant (the API's UTC) as the wall clock of the zone the schedule's cron is read in, which
 * the schedule line names right before it: `0 9 * * *` in Europe/Paris shows `next … 09:00:00`.
 * A zone this Node does not know (an older ICU than the service's) gets UTC, marked so.
 */
export function wallClock(iso: string, timeZone: string): string {
  let parts: Intl.DateTimeFormatPart[];
  try {
    parts = new Intl.DateTimeFormat('en-CA', { timeZone, hourCycle: 'h23', ...WALL_CLOCK }).formatToParts(new Date(iso));
  } catch {
    return `${safeLine(iso.slice(0, 19).replace('T', ' '))} UTC`;
  }
  const part = (type: Intl.DateTimeFormatPartTypes) => parts.find((p) => p.type === type)?.value;
  return `${part('year')}-${part('month')}-${part('day')} ${part('hour')}:${part('minute')}:${part('second')}`;
}

const WALL_CLOCK = { year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit' } as const;
