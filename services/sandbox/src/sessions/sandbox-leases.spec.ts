import type { CoordinationStore } from '@app/coordination';
import { InMemoryCoordinationStore } from '@app/coordination/in-memory/in-memory-coordination-store';
import { SandboxLeases } from './sandbox-leases';

const TASK = 'task_0123456789abcdef0123456789abcdef';
const TTL = 9_000;

describe('SandboxLeases: one sandbox instance per task', () => {
  let clock: number;
  let store: CoordinationStore;
  let a: SandboxLeases;
  let b: SandboxLeases;
  beforeEach(() => {
    clock = 1_000_000;
    store = new InMemoryCoordinationStore({ bucket: 'sandbox-leases' }, () => clock);
    a = new SandboxLeases(store, 'sbxa', TTL, () => clock);
    b = new SandboxLeases(store, 'sbxb', TTL, () => clock);
  });
  afterEach(async () => {
    await a.stop();
    await b.stop();
  });

  it('gives a free task to the first instance that asks; the other learns who holds it and until when', async () => {
    expect(await a.acquire(TASK)).toEqual({ held: true });
    expect(await b.acquire(TASK)).toEqual({ held: false, owner: 'sbxa', expiresAt: clock + TTL });
    expect(a.holds(TASK)).toBe(true);
    expect(b.holds(TASK)).toBe(false);
  });

  it('keeps the task with its holder while it uses it, however long', async () => {
    await a.acquire(TASK);
    for (let i = 0; i < 10; i++) {
      clock += TTL - 1_000;
      expect(await a.acquire(TASK)).toEqual({ held: true });
      expect((await b.acquire(TASK)).held).toBe(false);
    }
  });

  it('hands the task over only once the holder has stopped renewing for a whole TTL', async () => {
    await a.acquire(TASK);
    clock += TTL - 1;
    expect((await b.acquire(TASK)).held).toBe(false);
    clock += 1;
    expect(await b.acquire(TASK)).toEqual({ held: true });
    // The old holder now sees the new one and must not run anything.
    expect(await a.acquire(TASK)).toEqual({ held: false, owner: 'sbxb', expiresAt: clock + TTL });
  });

  it('frees the task at once when its holder releases it', async () => {
    await a.acquire(TASK);
    await a.release(TASK);
    expect(a.holds(TASK)).toBe(false);
    expect(await b.acquire(TASK)).toEqual({ held: true });
  });

  it('makes exactly one of many instances asking at once the holder', async () => {
    const instances = Array.from({ length: 8 }, (_, i) => new SandboxLeases(store, `sbx${i}`, TTL, () => clock));
    const outcomes = await Promise.all(instances.map((l) => l.acquire(TASK)));
    expect(outcomes.filter((o) => o.held)).toHaveLength(1);
    const owners = new Set(outcomes.flatMap((o) => (o.held ? [] : [o.owner])));
    expect(owners.size).toBe(1);
  });

  it('tells a holder that lost its task (taken after its lease ran out) so it stops its commands', async () => {
    const lost: string[] = [];
    await a.acquire(TASK);
    a.startRenewing((taskId) => lost.push(taskId));
    clock += TTL;
    await b.acquire(TASK);
    await new Promise((r) => setTimeout(r, TTL / 3 + 100)); // one renewal round of the real timer
    expect(lost).toEqual([TASK]);
    expect(a.holds(TASK)).toBe(false);
  }, 10_000);

  it('gives the task up itself when it cannot renew in time (cut off), before another instance may take it', async () => {
    const lost: string[] = [];
    const cutOff = new SandboxLeases(
      {
        ...store,
        get: (k) => store.get(k),
        create: (k, v) => store.create(k, v),
        update: () => Promise.reject(new Error('NATS unreachable')),
        delete: (k, r) => store.delete(k, r),
        close: async () => undefined,
      },
      'sbxc',
      TTL,
      () => clock,
    );
    await cutOff.acquire(TASK).catch(() => undefined);
    // Its first write was the create, which worked: it holds the task.
    expect(cutOff.holds(TASK)).toBe(true);
    cutOff.startRenewing((taskId) => lost.push(taskId));
    clock += (2 * TTL) / 3 + 1; // less than a TTL/3 left
    await new Promise((r) => setTimeout(r, TTL / 3 + 100));
    expect(lost).toEqual([TASK]);
    // Still inside its lease: nobody else may take it yet; the holder has already stopped.
    expect((await b.acquire(TASK)).held).toBe(false);
    await cutOff.stop();
  }, 10_000);

  it('keeps the task when a command renews the lease while a renewal round is on its way (its own write, not a loss)', async () => {
    const lost: string[] = [];
    // The renewal round's write is held back until a command's acquire has renewed the lease itself.
    let holdBack: ((go: () => void) => void) | undefined;
    const held = new Promise<() => void>((resolve) => (holdBack = resolve));
    const racing = new SandboxLeases(
      {
        get: (k) => store.get(k),
        create: (k, v) => store.create(k, v),
        update: (k, v, r) => {
          const hold = holdBack;
          if (!hold) return store.update(k, v, r);
          holdBack = undefined;
          return new Promise<void>((go) => hold(go)).then(() => store.update(k, v, r));
        },
        delete: (k, r) => store.delete(k, r),
        close: async () => undefined,
      },
      'sbxr',
      TTL,
      () => clock,
    );
    expect(await racing.acquire(TASK)).toEqual({ held: true }); // a create: nothing held back
    racing.startRenewing((taskId) => lost.push(taskId));
    const releaseRenewal = await held; // the round's update is on its way, with the revision it read
    expect(await racing.acquire(TASK)).toEqual({ held: true }); // a command renews it meanwhile
    releaseRenewal();
    await new Promise((r) => setTimeout(r, 100));
    expect(lost).toEqual([]);
    expect(racing.holds(TASK)).toBe(true);
    expect((await b.acquire(TASK)).held).toBe(false);
    await racing.stop();
  }, 10_000);
});
