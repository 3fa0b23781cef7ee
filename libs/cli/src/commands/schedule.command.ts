import type { Schedule } from '@agentic-task-service/client';
import { budgetText } from '../budget-text';
import type { CliContext } from '../context';
import { ExitCode } from '../exit-codes';
import { runLine, wallClock } from '../schedule-listing';
import { jsonLine, safeData, safeLine } from '../untrusted-text';
import { readSecrets } from './run.command';

export interface ScheduleCreateOptions {
  readonly tz?: string;
  readonly target?: string;
  readonly overlap?: 'skip' | 'enqueue';
  readonly paused: boolean;
  readonly env: Record<string, string>;
  readonly secret: string[];
  readonly maxTokens?: number;
  readonly maxCost?: number;
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
      ...(options.maxTokens === undefined ? {} : { maxTokens: options.maxTokens }),
      ...(options.maxCost === undefined ? {} : { maxCostUsd: options.maxCost }),
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
  // Indented as the runs below it; no line when the runs take the service's defaults.
  const budget = budgetText(safeData(schedule.task));
  if (budget) ctx.term.line(`  budget of each run: ${budget}`);
  for (const run of runs) ctx.term.line(`  ${runLine(run, schedule.timezone, ctx.term.colors)}`);
  return ExitCode.ok;
}

/** The most runs `--all` reads: 100 full pages, over a year of an hourly schedule. */
export const ALL_RUNS_BOUND = 10_000;
const PAGE_MAX = 100;

export interface ScheduleRunsOptions {
  readonly limit: number;
  readonly all: boolean;
  readonly json: boolean;
}

/** `ats schedule runs ID`: the schedule's runs, newest first, page after page up to --limit (or every one with --all, bounded). */
export async function scheduleRunsCommand(ctx: CliContext, id: string, options: ScheduleRunsOptions): Promise<ExitCode> {
  const { term } = ctx;
  const c = term.colors;
  const ats = await ctx.client();
  // The zone the due times are shown in; and NOT_FOUND, as for show, for a schedule that is not the caller's.
  const schedule = safeData(await ats.schedules.get(id));
  const wanted = options.all ? ALL_RUNS_BOUND : options.limit;
  let shown = 0;
  let cursor: string | undefined;
  do {
    const page = await ats.schedules.runsPage(id, { limit: Math.min(PAGE_MAX, wanted - shown), ...(cursor ? { cursor } : {}) });
    for (const run of page.runs.slice(0, wanted - shown)) {
      if (shown === 0 && !options.json) {
        term.line(c.dim(`runs of ${safeLine(schedule.id)}, newest first; due times in ${safeLine(schedule.timezone)}`));
      }
      term.line(options.json ? jsonLine(run) : runLine(run, schedule.timezone, c));
      shown += 1;
    }
    cursor = page.runs.length > 0 ? (page.nextCursor ?? undefined) : undefined;
  } while (cursor !== undefined && shown < wanted);

  if (shown === 0 && !options.json) term.line(c.dim(`${safeLine(schedule.id)} has no runs yet`));
  if (cursor === undefined) return ExitCode.ok;
  // Older runs remain. A script reading --json --all learns it on stderr; --limit was its own choice.
  if (options.all) {
    const note = `stopped after the ${ALL_RUNS_BOUND} newest runs: older ones are not shown`;
    if (options.json) term.error(`ats: ${note}`);
    else term.line(c.yellow(note));
  } else if (!options.json) {
    term.line(c.dim('older runs not shown: --limit <n> for more, --all for every one'));
  }
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
