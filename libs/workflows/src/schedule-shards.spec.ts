import { SCHEDULE_SHARDS, scheduleShardOf } from './schedule-shards';

// Every process must put a schedule in the same shard, today and after an upgrade: the values
// are pinned, and a thousand ids spread over every shard without one taking a large part.

describe('scheduleShardOf', () => {
  it('is FNV-1a of the id, modulo the shards: the same in every process and release', () => {
    // The published FNV-1a 32-bit values of '' and 'a' (offset basis, and 0xe40c292c).
    expect(['', 'a'].map((id) => scheduleShardOf(id, 2 ** 31))).toEqual([0x811c9dc5 % 2 ** 31, 0xe40c292c % 2 ** 31]);
    expect(scheduleShardOf('a', 16)).toBe(0xe40c292c % 16);
  });

  it('spreads a thousand schedule ids over every shard', () => {
    const counts = new Array<number>(SCHEDULE_SHARDS).fill(0);
    for (let i = 0; i < 1000; i++) counts[scheduleShardOf(`sched_${i.toString(16).padStart(24, '0')}`, SCHEDULE_SHARDS)]++;
    expect(Math.min(...counts)).toBeGreaterThan(1000 / SCHEDULE_SHARDS / 2);
    expect(Math.max(...counts)).toBeLessThan((1000 / SCHEDULE_SHARDS) * 2);
  });
});
