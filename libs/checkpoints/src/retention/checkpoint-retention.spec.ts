import { parseCheckpointRetention, retainedCheckpoints } from './checkpoint-retention';

const at = (id: number, ageMs: number, now: number) => ({ eventId: id, recordedAt: new Date(now - ageMs).toISOString(), ref: id });

describe('CHECKPOINT_RETENTION', () => {
  it('reads all, last:N and age:N with a unit, and refuses anything else naming what it takes', () => {
    expect(parseCheckpointRetention(undefined)).toEqual({ keep: 'all' });
    expect(parseCheckpointRetention('all')).toEqual({ keep: 'all' });
    expect(parseCheckpointRetention('last:20')).toEqual({ keep: 'last', count: 20 });
    expect(parseCheckpointRetention('age:30d')).toEqual({ keep: 'age', maxAgeMs: 30 * 86_400_000 });
    expect(parseCheckpointRetention('age:90s')).toEqual({ keep: 'age', maxAgeMs: 90_000 });
    for (const bad of ['last:0', 'last:-1', 'age:10', 'age:1w', 'keep', '5']) {
      expect(() => parseCheckpointRetention(bad)).toThrow(/CHECKPOINT_RETENTION must be "all", "last:N"/);
    }
  });

  it('keeps the last N, or those young enough, and always the last one', () => {
    const now = Date.parse('2026-11-28T12:00:00Z');
    const recorded = [at(3, 50_000, now), at(7, 40_000, now), at(9, 30_000, now), at(12, 20_000, now)];
    expect(retainedCheckpoints(recorded, { keep: 'all' }, now).map((c) => c.eventId)).toEqual([3, 7, 9, 12]);
    expect(retainedCheckpoints(recorded, { keep: 'last', count: 2 }, now).map((c) => c.eventId)).toEqual([9, 12]);
    expect(retainedCheckpoints(recorded, { keep: 'age', maxAgeMs: 35_000 }, now).map((c) => c.eventId)).toEqual([9, 12]);
    expect(retainedCheckpoints(recorded, { keep: 'age', maxAgeMs: 1_000 }, now).map((c) => c.eventId)).toEqual([12]);
    expect(retainedCheckpoints([], { keep: 'last', count: 1 }, now)).toEqual([]);
  });
});
