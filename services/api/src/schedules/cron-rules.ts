import { Cron } from 'croner';
import { ValidationError } from '@app/common';
import type { ScheduleState } from '@app/task-domain';

export const MAX_CRON_LENGTH = 200;
export const MAX_TIMEZONE_LENGTH = 64;
/** Consecutive due times looked at for the minimum interval: a tight pair shows among the first ones the cron reaches. */
const INTERVAL_SAMPLE = 64;
const SAMPLE_HORIZON_MS = 2 * 366 * 24 * 3_600_000;
/** A field: numbers, names (MON, JAN), `*`, `?`, ranges, steps, lists, `L`, `W`, `#`. No nicknames (@daily). */
const FIELD = /^[0-9A-Za-z*?,/#-]{1,64}$/;
const TIMEZONE = /^[A-Za-z][A-Za-z0-9_+-]*(\/[A-Za-z0-9_+-]+){0,2}$/;

/**
 * The cron library (croner) reads the expression and does every calendar sum, timezones and DST
 * included; here only what the contract adds: 5 fields, or 6 with seconds first, an IANA zone,
 * a cron that fires at all and never more often than `minIntervalMs`.
 */
export function checkedCron(cron: string, timezone: string, minIntervalMs: number): Cron {
  checkTimezone(timezone);
  if (cron.length > MAX_CRON_LENGTH) throw new ValidationError(`cron must be at most ${MAX_CRON_LENGTH} characters`);
  const fields = cron.trim().split(/\s+/);
  if (fields.length !== 5 && fields.length !== 6)
    throw new ValidationError(
      `cron must have 5 fields (minute hour day month weekday), or 6 with seconds first; "${cron}" has ${fields.length}`,
    );
  if (!fields.every((f) => FIELD.test(f))) throw new ValidationError(`cron "${cron}" has characters a cron field cannot hold`);
  let parsed: Cron;
  try {
    parsed = cronOf(fields.join(' '), timezone);
  } catch (error) {
    throw new ValidationError(`cron "${cron}" is not valid: ${(error as Error).message.replace(/^CronPattern: /, '')}`);
  }
  // Due times within the sample's horizon only: a cron firing on leap days that are Mondays walks
  // centuries of calendar (~100 ms of CPU for 64 of them), and a create must stay cheap.
  const runs: Date[] = [];
  const horizon = Date.now() + SAMPLE_HORIZON_MS;
  for (let run = parsed.nextRun(new Date()); run && runs.length < INTERVAL_SAMPLE; run = parsed.nextRun(run)) {
    runs.push(run);
    if (run.getTime() > horizon) break;
  }
  if (runs.length === 0) throw new ValidationError(`cron "${cron}" never fires`);
  for (let i = 1; i < runs.length; i++) {
    const gap = runs[i].getTime() - runs[i - 1].getTime();
    if (gap < minIntervalMs) {
      throw new ValidationError(
        `cron "${cron}" fires ${gap / 1000} s apart (at ${runs[i - 1].toISOString()} and ${runs[i].toISOString()}); the shortest interval allowed is ${minIntervalMs / 1000} s (SCHEDULE_MIN_INTERVAL_MS)`,
      );
    }
  }
  return parsed;
}

export function checkTimezone(timezone: string): void {
  const named = timezone.length <= MAX_TIMEZONE_LENGTH && TIMEZONE.test(timezone);
  if (!named || !isKnownZone(timezone))
    throw new ValidationError(`timezone must be an IANA time zone name such as "Europe/Paris" or "UTC", not "${timezone.slice(0, 80)}"`);
}

function isKnownZone(timezone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: timezone });
    return true;
  } catch {
    return false;
  }
}

/** Paused: croner only computes; the firer keeps its own one timer for every schedule. */
const cronOf = (cron: string, timezone: string): Cron => new Cron(cron, { timezone, mode: '5-or-6-parts', paused: true });

const parsedCrons = new Map<string, Cron>();

/** The schedule's first due time still to come: after its last recorded one and after it was created, resumed or re-timed. */
export function nextDueAt(state: ScheduleState): Date | undefined {
  if (!state.exists || state.deleted || state.paused) return undefined;
  const key = `${state.timezone} ${state.cron}`;
  let cron = parsedCrons.get(key);
  if (!cron) {
    cron = cronOf(state.cron, state.timezone);
    if (parsedCrons.size > 10_000) parsedCrons.clear();
    parsedCrons.set(key, cron);
  }
  const after = state.lastDueAt !== undefined && state.lastDueAt > state.anchorAt ? state.lastDueAt : state.anchorAt;
  return cron.nextRun(new Date(after)) ?? undefined;
}
