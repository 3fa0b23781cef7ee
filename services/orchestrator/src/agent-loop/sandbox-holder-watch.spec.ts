import { sandboxLeaseKey } from '@app/contracts';
import type { CoordinationStore } from '@app/coordination';
import { InMemoryCoordinationStore } from '@app/coordination/in-memory/in-memory-coordination-store';
import { SandboxHolderWatch } from './sandbox-holder-watch';

const TASK = 'task_0123456789abcdef0123456789abcdef';
const TTL = 15_000;
const POLL = 5;

describe('SandboxHolderWatch', () => {
  let store: CoordinationStore;
  let now: number;
  let watch: SandboxHolderWatch;

  beforeEach(() => {
    store = new InMemoryCoordinationStore({ bucket: 'sandbox-leases' });
    now = 1_000_000;
    watch = new SandboxHolderWatch(Promise.resolve(store), POLL, () => now);
  });
  afterEach(() => watch.close());

  const lease = (owner: string, renewedAt: number, { withTtl = true } = {}) =>
    JSON.stringify({ owner, expiresAt: renewedAt + TTL, ...(withTtl ? { ttlMs: TTL } : {}) });
  const write = async (value: string) => {
    const current = await store.get(sandboxLeaseKey(TASK));
    if (current) await store.update(sandboxLeaseKey(TASK), value, current.revision);
    else await store.create(sandboxLeaseKey(TASK), value);
  };
  const release = async () => {
    const current = await store.get(sandboxLeaseKey(TASK));
    if (current) await store.delete(sandboxLeaseKey(TASK), current.revision);
  };
  const polls = (n = 4) => new Promise((resolve) => setTimeout(resolve, POLL * n));
  /** What the watch said so far: the reason, or 'alive'. */
  const verdict = (lost: Promise<string>) => Promise.race([lost, polls(1).then(() => 'alive')]);

  it('says the holder is lost once it has missed two renewals (a third of a TTL before its lease runs out)', async () => {
    await write(lease('sandbox-a', now));
    const w = watch.watch(TASK);
    await polls();
    now += 9_999; // one renewal missed: still alive
    await polls();
    expect(await verdict(w.lost)).toBe('alive');
    now += 1; // 10 s without a renewal: two missed
    await polls();
    expect(await verdict(w.lost)).toBe('the sandbox instance running it was lost (it stopped renewing its hold on the task)');
    w.stop();
  });

  it('keeps quiet while the holder renews', async () => {
    await write(lease('sandbox-a', now));
    const w = watch.watch(TASK);
    for (let i = 0; i < 6; i++) {
      now += 5_000;
      await write(lease('sandbox-a', now));
      await polls();
    }
    expect(await verdict(w.lost)).toBe('alive');
    w.stop();
  });

  it('does not blame a holder that died before the call: the stale lease is taken over, the new holder renews', async () => {
    await write(lease('sandbox-dead', now - 60_000));
    const w = watch.watch(TASK);
    await polls();
    expect(await verdict(w.lost)).toBe('alive');
    await write(lease('sandbox-b', now));
    await polls();
    now += 4_000;
    await write(lease('sandbox-b', now));
    await polls();
    expect(await verdict(w.lost)).toBe('alive');
    w.stop();
  });

  it('does not count a hand-over as a loss: the holder released the task, another took it', async () => {
    await write(lease('sandbox-a', now));
    const w = watch.watch(TASK);
    await polls();
    await release();
    await polls();
    await write(lease('sandbox-b', now));
    await polls();
    expect(await verdict(w.lost)).toBe('alive');
    now += 10_000; // and the new holder's own death is noticed
    await polls();
    expect(await verdict(w.lost)).toContain('was lost');
    w.stop();
  });

  it('reads a lease without its TTL (an older writer) as lost only once it has run out', async () => {
    await write(lease('sandbox-a', now, { withTtl: false }));
    const w = watch.watch(TASK);
    await polls();
    now += 14_999;
    await polls();
    expect(await verdict(w.lost)).toBe('alive');
    now += 1;
    await polls();
    expect(await verdict(w.lost)).toContain('was lost');
    w.stop();
  });

  it('decides nothing while the store cannot be read, and stops reading once stopped', async () => {
    await write(lease('sandbox-a', now));
    let reads = 0;
    let failing = false;
    const flaky: CoordinationStore = Object.assign(Object.create(store) as CoordinationStore, {
      get: async (key: string) => {
        reads++;
        if (failing) throw new Error('NATS is reconnecting');
        return store.get(key);
      },
    });
    const flakyWatch = new SandboxHolderWatch(Promise.resolve(flaky), POLL, () => now);
    const w = flakyWatch.watch(TASK);
    await polls();
    failing = true;
    now += 60_000;
    await polls();
    expect(await verdict(w.lost)).toBe('alive');
    w.stop();
    const after = reads;
    await polls();
    expect(reads).toBe(after);
  });

  it('fails no read for good when the store never opens', async () => {
    const broken = new SandboxHolderWatch(Promise.reject(new Error('no NATS')), POLL, () => now);
    const w = broken.watch(TASK);
    await polls();
    expect(await verdict(w.lost)).toBe('alive');
    w.stop();
    await broken.close();
  });
});
