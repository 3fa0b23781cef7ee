import type { Schedule, ScheduleRun } from '@agentic-task-service/client';
import type { CliContext } from '../context';
import { ExitCode } from '../exit-codes';
import { jsonLine, safeData, safeLine } from '../untrusted-text';
import { readSecrets } from './run.command';

export interface ScheduleCreateOptions {
  readonly tz?: string;
  readonly target?: string;
  readonly overlap?: 'skip' | 'enqueue';
  readonly paused: boolean;
  readonly env: Record<string, string>;
  readonly secret: string[];
  readonly json: boolean;
}

/** `ats schedule create "<cron>" "<message>"`: a task (or a follow-up into --target) at each due time. */
export async function scheduleCreateCommand(
  ctx: CliContext,
  cron: string,
  message: string,
  options: ScheduleCreateOptions,
): Promise<ExitCode> {
  const secrets = await readSecrets(ctx, options.secret);
  const schedule = await (
    await ctx.client()
  ).schedules.create({
    cron,
    task: {
      message,
      ...(Object.keys(options.env).length > 0 ? { env: options.env } : {}),
      ...(Object.keys(secrets).length > 0 ? { secrets } : {}),
    },
    ...(options.tz === undefined ? {} : { timezone: options.tz }),
    ...(options.target === undefined ? {} : { target: options.target }),
    ...(options.overlap === undefined ? {} : { overlap: options.overlap }),
    ...(options.paused ? { paused: true } : {}),
  });
  printSchedule(ctx, schedule, options.json);
  return ExitCode.ok;
}

/** `ats schedule ls`: the caller's schedules, newest first. */
export async function scheduleLsCommand(ctx: CliContext, options: { json: boolean }): Promise<ExitCode> {
  let shown = 0;
  for await (const schedule of (await ctx.client()).schedules.list()) {
    shown += 1;
    printSchedule(ctx, schedule, options.json);
  }
  if (shown === 0 && !options.json) ctx.term.line(ctx.term.colors.dim('no schedules yet: ats schedule create "<cron>" "<message>"'));
  return ExitCode.ok;
}

/** `ats schedule show ID`: the schedule and its latest runs. */
export async function scheduleShowCommand(ctx: CliContext, id: string, options: { json: boolean; runs: number }): Promise<ExitCode> {
  const ats = await ctx.client();
  const schedule = await ats.schedules.get(id);
  const { runs } = await ats.schedules.runsPage(id, { limit: options.runs });
  if (options.json) {
    ctx.term.line(jsonLine({ ...schedule, runs }));
    return ExitCode.ok;
  }
  printSchedule(ctx, schedule, false);
  for (const run of runs) printRun(ctx, run, schedule.timezone);
  return ExitCode.ok;
}

/** `ats schedule pause|resume ID`. */
export async function schedulePauseCommand(ctx: CliContext, id: string, paused: boolean, options: { json: boolean }): Promise<ExitCode> {
  const ats = await ctx.client();
  printSchedule(ctx, await (paused ? ats.schedules.pause(id) : ats.schedules.resume(id)), options.json);
  return ExitCode.ok;
}

/** `ats schedule rm ID`. */
export async function scheduleRmCommand(ctx: CliContext, id: string): Promise<ExitCode> {
  const deleted = safeData(await (await ctx.client()).schedules.delete(id));
  ctx.term.line(`${safeLine(deleted.id)} deleted`);
  return ExitCode.ok;
}

function printSchedule(ctx: CliContext, untrusted: Schedule, json: boolean): void {
  if (json) return ctx.term.line(jsonLine(untrusted));
  const s = safeData(untrusted);
  const c = ctx.term.colors;
  const state = s.paused ? c.yellow('paused') : c.green(`next ${s.nextRunAt ? wallClock(s.nextRunAt, s.timezone) : '-'}`);
  const first = safeLine(s.task.message);
  const message = first.length > 50 ? `${first.slice(0, 49)}…` : first;
  const target = s.target ? ` → ${safeLine(s.target)}` : '';
  ctx.term.line(`${s.id}  ${safeLine(s.cron)} ${c.dim(safeLine(s.timezone))}  ${state}${target}  ${message}`);
}

function printRun(ctx: CliContext, untrusted: ScheduleRun, timezone: string): void {
  const r = safeData(untrusted);
  const c = ctx.term.colors;
  const outcome = r.outcome === 'started' ? c.green(r.outcome) : r.outcome === 'failed' ? c.red(r.outcome) : c.yellow(r.outcome);
  const detail = r.taskId ? safeLine(r.taskId) : '';
  const reason = r.reason ? c.dim(safeLine(r.reason)) : '';
  ctx.term.line(`  ${wallClock(r.dueAt, timezone)}  ${outcome}  ${detail}${detail && reason ? '  ' : ''}${reason}`);
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
    return `${iso.slice(0, 19).replace('T', ' ')} UTC`;
  }
  const part = (type: Intl.DateTimeFormatPartTypes) => parts.find((p) => p.type === type)?.value;
  return `${part('year')}-${part('month')}-${part('day')} ${part('hour')}:${part('minute')}:${part('second')}`;
}

const WALL_CLOCK = { year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit' } as const;
