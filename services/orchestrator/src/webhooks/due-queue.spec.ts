import { DueQueue } from './due-queue';

describe('DueQueue', () => {
  it('gives entries back earliest first, whatever order they were pushed in', () => {
    const queue = new DueQueue();
    // A fixed shuffle of 0..999 (a multiplicative step coprime to 1000), with repeated due times.
    const times = Array.from({ length: 1000 }, (_, i) => (i * 617) % 1000).map((t) => Math.floor(t / 3));
    times.forEach((t, i) => queue.push(`m${i}`, t));

    const popped: number[] = [];
    while (queue.size > 0) popped.push(queue.pop()!.dueAt);

    expect(popped).toEqual([...times].sort((a, b) => a - b));
    expect(queue.pop()).toBeUndefined();
  });

  it('peeks at the earliest entry without removing it', () => {
    const queue = new DueQueue();
    queue.push('later', 20);
    queue.push('sooner', 10);

    expect(queue.peek()).toEqual({ id: 'sooner', dueAt: 10 });
    expect(queue.size).toBe(2);
    expect(queue.pop()).toEqual({ id: 'sooner', dueAt: 10 });
    expect(queue.peek()).toEqual({ id: 'later', dueAt: 20 });
  });

  it('keeps an id pushed twice as two entries (a re-timed message; the stale one is the caller’s to drop)', () => {
    const queue = new DueQueue();
    queue.push('m', 50);
    queue.push('m', 5);

    expect([queue.pop(), queue.pop()]).toEqual([
      { id: 'm', dueAt: 5 },
      { id: 'm', dueAt: 50 },
    ]);
  });
});
