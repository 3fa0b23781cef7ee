import { randomBytes } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { scheduleClockWorkflowId, scheduleShardOf } from '@app/workflows';
import type { FireSchedules, ScheduleLook } from '../schedule-clock.port';
import { TemporalScheduleClock } from './temporal-schedule-clock';

// The schedules' Temporal clock against a real Temporal dev server
// (`export TEMPORAL_ADDRESS=$(bash infra/dev/ensure-temporal.sh)`): a clock workflow per shard that
// sleeps until the earliest due time its looks answered, looks at every schedule due by then in
// one activity, wakes at once on a change, waits while every schedule is paused, looks again soon
// at a schedule whose look failed, and retries a failed look (then asking it to recover). Each test
// has a task queue of its own, and so workflow ids of its own.

const address = process.env.TEMPORAL_ADDRESS ?? '';
const namespace = 'default';
jest.setTimeout(60_000);
Runtime.install({ logger: new DefaultLogger('WARN') });

const unique = () => `ats-test-${randomBytes(5).toString('hex')}`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Look {
  readonly shard: number;
  /** The schedules looked at (a rescan's: the registered ones of the shard). */
  readonly ids: readonly string[];
  readonly recover: readonly string[];
  readonly rescan: boolean;
  readonly at: number;
}

/** What a schedule answers at its nth look: its next due time, null (none), 'failed', or an Error failing the whole look. */
type Answer = number | null | 'failed' | Error;

/**
 * A clock over a scripted fireSchedules: `registered` is the store's list a rescan reads, and
 * each schedule answers what `answer` says for its nth look.
 */
function scriptedClock(registered: string[], answer: (scheduleId: string, n: number) => Answer, shards = 1) {
  const looks: Look[] = [];
  const seen = new Map<string, number>();
  const fireSchedules: FireSchedules = async (look: ScheduleLook) => {
    const ids = look.rescan ? registered.filter((id) => scheduleShardOf(id, look.shards) === look.shard) : look.scheduleIds;
    looks.push({ shard: look.shard, ids, recover: look.rescan ? ids : look.recover, rescan: look.rescan, at: Date.now() });
    const next: Record<string, number | null> = {};
    const failed: string[] = [];
    for (const id of ids) {
      const n = seen.get(id) ?? 0;
      seen.set(id, n + 1);
      const result = answer(id, n);
      if (result instanceof Error) throw result;
      if (result === 'failed') failed.push(id);
      else next[id] = result;
    }
    return { next, failed };
  };
  const id = unique();
  const clock = new TemporalScheduleClock(fireSchedules, { address, namespace, taskQueue: id, shards });
  return {
    clock,
    looks,
    taskQueue: id,
    lookedAt: (scheduleId: string) => looks.filter((l) => l.ids.includes(scheduleId)),
  };
}

async function until(what: string, probe: () => boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!probe()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

describe('TemporalScheduleClock on a Temporal dev server', () => {
  let connection: Connection;
  let client: Client;
  const clocks: TemporalScheduleClock[] = [];
  const queues: string[] = [];

  beforeAll(async () => {
    if (!address) throw new Error('TEMPORAL_ADDRESS is not set: run `export TEMPORAL_ADDRESS=$(bash infra/dev/ensure-temporal.sh)` first');
    connection = await Connection.connect({ address });
    client = new Client({ connection, namespace });
  });
  afterEach(async () => {
    await Promise.all(clocks.splice(0).map((c) => c.stop()));
    // Paused schedules' workflows wait for a change forever: end them, so the dev server stays small.
    for (const taskQueue of queues.splice(0)) {
      for await (const wf of client.workflow.list({ query: `TaskQueue = '${taskQueue}' AND ExecutionStatus = 'Running'` })) {
        await client.workflow
          .getHandle(wf.workflowId)
          .terminate('test finished')
          .catch(() => undefined);
      }
    }
  });
  afterAll(async () => connection?.close());

  const started = async (s: ReturnType<typeof scriptedClock>) => {
    clocks.push(s.clock);
    queues.push(s.taskQueue);
    await s.clock.start();
    return s;
  };

  it('wakes at the earliest due time answered, looks at every schedule due by then in one look, and recovers only on a rescan', async () => {
    // Both schedules answer the same next tick, three times, then an hour away.
    const tick = () => Math.ceil(Date.now() / 400) * 400 + 400;
    const s = await started(scriptedClock(['sched_a', 'sched_b'], (_, n) => (n < 3 ? tick() : Date.now() + 3_600_000)));
    await s.clock.rescan();
    await until('four looks', () => s.looks.length >= 4);
    expect(s.looks.map((l) => ({ ids: [...l.ids].sort(), recover: [...l.recover].sort(), rescan: l.rescan }))).toEqual([
      { ids: ['sched_a', 'sched_b'], recover: ['sched_a', 'sched_b'], rescan: true },
      ...[1, 2, 3].map(() => ({ ids: ['sched_a', 'sched_b'], recover: [], rescan: false })),
    ]);
    const gaps = s.looks.slice(1).map((l, i) => l.at - s.looks[i].at);
    for (const gap of gaps.slice(1)) expect(gap).toBeGreaterThanOrEqual(300);
    // Then the next due time is an hour away: no wake meanwhile.
    await sleep(1000);
    expect(s.looks).toHaveLength(4);
  });

  it('looks at a changed schedule at once, a new one included, and waits while every schedule is paused', async () => {
    let paused = false;
    const registered = ['sched_b'];
    const s = await started(scriptedClock(registered, () => (paused ? null : Date.now() + 3_600_000)));
    await s.clock.rescan();
    await until('the first look', () => s.looks.length === 1);
    const changedAt = Date.now();
    paused = true;
    await s.clock.changed('sched_b');
    await until('the look of the change', () => s.looks.length === 2);
    expect(s.looks[1]).toMatchObject({ ids: ['sched_b'], rescan: false });
    expect(s.looks[1].at - changedAt).toBeLessThan(3000);
    // Paused (no next due time): asleep until the next change, however long.
    await sleep(2000);
    expect(s.looks).toHaveLength(2);
    registered.push('sched_new');
    await s.clock.changed('sched_new');
    await until('the look of the new schedule', () => s.lookedAt('sched_new').length === 1);
    expect(s.looks.at(-1)).toMatchObject({ ids: ['sched_new'], rescan: false });
    const description = await client.workflow.getHandle(scheduleClockWorkflowId(s.taskQueue, 0)).describe();
    expect(description.status.name).toBe('RUNNING');
  });

  it('spreads the schedules over the shards: a change wakes only its own shard, whose first start rescans', async () => {
    const ids = Array.from({ length: 12 }, (_, i) => `sched_${i}`);
    const inShard = (shard: number) => ids.filter((id) => scheduleShardOf(id, 3) === shard);
    expect([0, 1, 2].map((shard) => inShard(shard).length > 0)).toEqual([true, true, true]);
    const s = await started(scriptedClock(ids, () => Date.now() + 3_600_000, 3));
    const one = inShard(1)[0];
    await s.clock.changed(one);
    await until('the shard to look', () => s.looks.length >= 1);
    await sleep(800);
    expect(s.looks).toEqual([expect.objectContaining({ shard: 1, ids: inShard(1), rescan: true })]);
    await expect(client.workflow.getHandle(scheduleClockWorkflowId(s.taskQueue, 0)).describe()).rejects.toThrow(/not found/i);
    await s.clock.rescan();
    await until('every shard to rescan', () => s.looks.length >= 4);
    expect(new Set(s.looks.slice(1).map((l) => l.shard))).toEqual(new Set([0, 1, 2]));
    expect(s.looks.slice(1).every((l) => l.rescan)).toBe(true);
  });

  it('looks again soon, with recovery, at a schedule whose look failed, and not at the others', async () => {
    const s = await started(
      scriptedClock(['sched_ok', 'sched_bad'], (id, n) =>
        id === 'sched_bad' && n === 1 ? 'failed' : n === 0 ? Date.now() + 300 : Date.now() + 3_600_000,
      ),
    );
    await s.clock.rescan();
    await until('the look after the failure', () => s.lookedAt('sched_bad').length === 3, 20_000);
    const [, failedLook, retry] = s.lookedAt('sched_bad');
    expect(retry.ids).toEqual(['sched_bad']);
    expect(retry.recover).toEqual(['sched_bad']);
    expect(retry.at - failedLook.at).toBeGreaterThanOrEqual(4500);
    expect(s.lookedAt('sched_ok')).toHaveLength(2);
  });

  it('retries a failed look, asking it to recover, and keeps the error text out of the history', async () => {
    const s = await started(
      scriptedClock(['sched_d'], (_, n) =>
        n === 1 ? new Error('token sk-secret-canary in a message') : n === 0 ? Date.now() + 200 : Date.now() + 3_600_000,
      ),
    );
    await s.clock.rescan();
    await until('the retry', () => s.looks.length >= 3);
    expect(s.looks.slice(0, 3).map((l) => ({ rescan: l.rescan, recover: l.recover }))).toEqual([
      { rescan: true, recover: ['sched_d'] },
      { rescan: false, recover: [] },
      { rescan: false, recover: ['sched_d'] },
    ]);
    const history = await client.workflow.getHandle(scheduleClockWorkflowId(s.taskQueue, 0)).fetchHistory();
    expect(JSON.stringify(history)).not.toContain('sk-secret-canary');
  });

  it('answers ping once started, and not before', async () => {
    const s = scriptedClock([], () => null);
    await expect(s.clock.ping()).rejects.toThrow(/not connected/);
    await started(s);
    await expect(s.clock.ping()).resolves.toBeUndefined();
  });
});
