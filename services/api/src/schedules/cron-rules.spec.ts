import { ValidationError } from '@app/common';
import { initialScheduleState } from '@app/task-domain';
import { checkedCron, nextDueAt } from './cron-rules';

const refusal = (cron: string, timezone = 'UTC', min = 60_000) => {
  try {
    checkedCron(cron, timezone, min);
  } catch (error) {
    expect(error).toBeInstanceOf(ValidationError);
    return (error as Error).message;
  }
  throw new Error(`"${cron}" was accepted`);
};

describe('cron rules', () => {
  it.each([
    ['a 5-field cron', '*/5 * * * *', 'UTC'],
    ['a 6-field cron with seconds first', '0 */2 * * * *', 'UTC'],
    ['names and a zone with DST', '30 9 * * MON-FRI', 'Europe/Paris'],
  ])('takes %s', (_case, cron, timezone) => {
    expect(() => checkedCron(cron, timezone, 60_000)).not.toThrow();
  });

  it.each([
    ['4 fields', '* * * *', '5 fields'],
    ['7 fields', '0 0 0 1 1 * 2030', '5 fields'],
    ['a nickname', '@daily', '5 fields'],
    ['a field out of range', '61 * * * *', 'not valid'],
    ['junk', '* * * * $(rm)', 'characters'],
    ['a huge expression', `${'1,'.repeat(500)}1 * * * *`, 'at most 200'],
    ['a cron that never fires', '0 0 30 2 *', 'never fires'],
    ['seconds tighter than the minimum', '*/10 * * * * *', 'SCHEDULE_MIN_INTERVAL_MS'],
    ['two runs a minute apart once a day', '0,1 0 * * *', 'SCHEDULE_MIN_INTERVAL_MS'],
  ])('refuses %s', (_case, cron, message) => {
    expect(refusal(cron, 'UTC', 120_000)).toContain(message);
  });

  it.each(['Mars/Olympus', '+01:00', '../etc/passwd', 'x'.repeat(100)])('refuses the timezone %s', (timezone) => {
    expect(refusal('* * * * *', timezone)).toContain('IANA time zone');
  });

  it('counts due times in the schedule zone, across a DST change, from the last one recorded', () => {
    const state = {
      ...initialScheduleState(),
      exists: true,
      cron: '30 2 * * *',
      timezone: 'Europe/Paris',
      anchorAt: '2026-03-28T12:00:00.000Z',
    };
    // 29 March 2026: clocks go from 02:00 to 03:00 in Paris; croner runs the 02:30 job at 03:00 CEST.
    expect(nextDueAt(state)?.toISOString()).toBe('2026-03-29T01:00:00.000Z');
    expect(nextDueAt({ ...state, lastDueAt: '2026-03-29T01:00:00.000Z' })?.toISOString()).toBe('2026-03-30T00:30:00.000Z');
    expect(nextDueAt({ ...state, paused: true })).toBeUndefined();
  });
});
