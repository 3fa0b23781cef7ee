import { SlotCounts, admit, parseSlotCounts, serializeSlotCounts } from './sliding-window';

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
    // The request at 0 s leaves the window at 61 s (60 slots before the current one still count).
    expect(answers[3]).toEqual({ allowed: false, retryAfterMs: 31_000 });
    const retried = run([0, 10_000, 20_000, 61_000]);
    expect(retried.answers[3].allowed).toBe(true);
    expect(run([0, 10_000, 20_000, 60_999]).answers[3].allowed).toBe(false);
  });

  it('waits for as many old slots as the request needs, not just the oldest', () => {
    // Two requests in the first second, one at 5 s: a fourth waits for the first second only.
    const { answers } = run([0, 500, 5_000, 6_000], { limit: 3, windowMs: 60_000 });
    expect(answers[3]).toEqual({ allowed: false, retryAfterMs: 55_000 });
    // A limit of 2 filled within the first second: the third waits for that whole second to leave.
    const dense = run([0, 100, 200], { limit: 2, windowMs: 60_000 });
    expect(dense.answers[2]).toEqual({ allowed: false, retryAfterMs: 60_800 });
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
    expect(counts).toEqual([[Math.floor((T0 + 120_000) / 1000), 1]]);
    const same = run([0, 200, 400]);
    expect(same.counts).toEqual([[T0 / 1000, 3]]);
  });

  it('scales the slots with a shorter window (tests use one)', () => {
    const { answers } = run([0, 1, 2, 3], { limit: 3, windowMs: 3_000 });
    expect(answers[3]).toEqual({ allowed: false, retryAfterMs: 3_047 });
    expect(run([0, 1, 2, 3_050], { limit: 3, windowMs: 3_000 }).answers[3].allowed).toBe(true);
  });

  it('reads back what it wrote, and treats anything unreadable as an empty window', () => {
    const counts: SlotCounts = [
      [10, 2],
      [12, 1],
    ];
    expect(parseSlotCounts(serializeSlotCounts(counts))).toEqual(counts);
    expect(parseSlotCounts('not json')).toEqual([]);
    expect(parseSlotCounts('{"a":1}')).toEqual([]);
    expect(parseSlotCounts('[[1,"x"],[2,1],[1.5,1],[3,0]]')).toEqual([[2, 1]]);
    expect(parseSlotCounts('[[5,1],[2,1]]')).toEqual([
      [2, 1],
      [5, 1],
    ]);
  });
});
