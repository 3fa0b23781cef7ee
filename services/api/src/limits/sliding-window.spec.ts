import type { SlotCounts } from './sliding-window';
import { admit, parseSlotCounts, serializeSlotCounts } from './sliding-window';

const minute = { limit: 3, windowMs: 60_000 };
const T0 = 1_700_000_000_000; // a whole second: slot 1_700_000_000 of one second each

/** Sends requests at the given times (ms after T0), returning which were admitted and the state. */
function run(times: number[], policy = minute, start: SlotCounts = []) {
  let counts = start;
  const answers = times.map((t) => {
    const a = admit(counts, T0 + t, policy);
    if (a.allowed) counts = a.counts;
    return a;
  });
  return { answers, counts };
}

describe('sliding window rate limit math', () => {
  it('admits `limit` requests in a window and refuses the next one', () => {
    const { answers } = run([0, 10, 20, 30]);
    expect(answers.map((a) => a.allowed)).toEqual([true, true, true, false]);
  });

  it('says when the refused request would fit: once the oldest counted slot leaves the window', () => {
    const { answers } = run([0, 10_000, 20_000, 30_000]);
    // The request at 0 s leaves the window at 60 s, one window after it.
    expect(answers[3]).toEqual({ allowed: false, retryAfterMs: 30_000 });
    const retried = run([0, 10_000, 20_000, 60_000]);
    expect(retried.answers[3].allowed).toBe(true);
    expect(run([0, 10_000, 20_000, 59_999]).answers[3].allowed).toBe(false);
  });

  it('waits for as many old slots as the request needs, not just the oldest', () => {
    // Two requests in the first second, one at 5 s: a fourth waits for the first second only,
    // until its latest request (at 0.5 s) is a minute old.
    const { answers } = run([0, 500, 5_000, 6_000], { limit: 3, windowMs: 60_000 });
    expect(answers[3]).toEqual({ allowed: false, retryAfterMs: 54_500 });
    // A limit of 2 filled within the first second: the third waits for that second's latest to leave.
    const dense = run([0, 100, 200], { limit: 2, windowMs: 60_000 });
    expect(dense.answers[2]).toEqual({ allowed: false, retryAfterMs: 59_900 });
  });

  it('never asks a caller to wait longer than the window, and a retry after the wait it gave fits', () => {
    // Issue 32: a limit filled within one second was told to wait 60.8 s, a Retry-After of 61.
    const policy = { limit: 2, windowMs: 60_000 };
    for (const offset of [0, 1, 500, 999]) {
      const { answers, counts } = run([offset, offset, offset], policy);
      const refused = answers[2];
      if (refused.allowed) throw new Error('expected the third request to be refused');
      expect(refused.retryAfterMs).toBeLessThanOrEqual(policy.windowMs);
      expect(Math.ceil(refused.retryAfterMs / 1000)).toBeLessThanOrEqual(60);
      expect(admit(counts, T0 + offset + refused.retryAfterMs, policy).allowed).toBe(true);
    }
  });

  it('never admits more than `limit` in any span of one window, however the requests are spread', () => {
    const policy = { limit: 5, windowMs: 60_000 };
    let counts: SlotCounts = [];
    const admitted: number[] = [];
    for (let t = 0; t < 300_000; t += 700) {
      const a = admit(counts, T0 + t, policy);
      if (a.allowed) {
        counts = a.counts;
        admitted.push(t);
      }
    }
    for (const start of admitted)
      expect(admitted.filter((t) => t >= start && t < start + policy.windowMs).length).toBeLessThanOrEqual(policy.limit);
    // ... and it is not stingy: over five minutes about five windows' worth got through.
    expect(admitted.length).toBeGreaterThanOrEqual(20);
  });

  it('keeps only the slots that still count, so its state stays small', () => {
    const { counts } = run([0, 1_000, 2_000, 120_000]);
    expect(counts).toEqual([[Math.floor((T0 + 120_000) / 1000), 1, T0 + 120_000]]);
    const same = run([0, 200, 400]);
    expect(same.counts).toEqual([[T0 / 1000, 3, T0 + 400]]);
  });

  it('scales the slots with a shorter window (tests use one)', () => {
    const { answers } = run([0, 1, 2, 3], { limit: 3, windowMs: 3_000 });
    expect(answers[3]).toEqual({ allowed: false, retryAfterMs: 2_999 });
    expect(run([0, 1, 2, 3_002], { limit: 3, windowMs: 3_000 }).answers[3].allowed).toBe(true);
    expect(run([0, 1, 2, 3_001], { limit: 3, windowMs: 3_000 }).answers[3].allowed).toBe(false);
  });

  it('reads back what it wrote, and treats anything unreadable as an empty window', () => {
    const counts: SlotCounts = [
      [10, 2, 10_500],
      [12, 1, 12_000],
    ];
    expect(parseSlotCounts(serializeSlotCounts(counts))).toEqual(counts);
    expect(parseSlotCounts('not json')).toEqual([]);
    expect(parseSlotCounts('{"a":1}')).toEqual([]);
    expect(parseSlotCounts('[[1,"x",1],[2,1,2],[1.5,1,1],[3,0,3],[4,1]]')).toEqual([[2, 1, 2]]);
    expect(parseSlotCounts('[[5,1,5],[2,1,2]]')).toEqual([
      [2, 1, 2],
      [5, 1, 5],
    ]);
  });
});
