import { wallClock } from '../src/schedule-listing';

describe('schedule times', () => {
  it("shows an instant as the wall clock of the schedule's zone, DST included", () => {
    expect(wallClock('2026-12-01T08:00:00.000Z', 'Europe/Paris')).toBe('2026-12-01 09:00:00');
    expect(wallClock('2026-07-01T07:00:00.000Z', 'Europe/Paris')).toBe('2026-07-01 09:00:00');
    expect(wallClock('2026-12-01T23:30:05.000Z', 'America/New_York')).toBe('2026-12-01 18:30:05');
    expect(wallClock('2026-12-01T00:00:00.000Z', 'UTC')).toBe('2026-12-01 00:00:00');
  });

  it('falls back to UTC, marked so, for a zone this Node does not know', () => {
    expect(wallClock('2026-12-01T08:00:00.000Z', 'Mars/Olympus_Mons')).toBe('2026-12-01 08:00:00 UTC');
  });
});
