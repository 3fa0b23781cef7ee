import { randomBytes } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import type { FireDue, ScheduleWake } from '../schedule-clock.port';
import { TemporalScheduleClock } from './temporal-schedule-clock';

// The schedules' Temporal clock against a real Temporal dev server
// (`export TEMPORAL_ADDRESS=$(bash infra/dev/ensure-temporal.sh)`): one workflow per schedule that
// sleeps until the due time fireDue answered, wakes at once on a change, waits while paused, ends
// when the schedule is gone, and retries a failed fireDue (then asking it to recover). Each test
// has a task queue and workflow id prefix of its own.

const address = process.env.TEMPORAL_ADDRESS ?? '';
const namespace = 'default';
jest.setTimeout(60_000);
Runtime.install({ logger: new DefaultLogger('WARN') });

const unique = () => `ats-test-${randomBytes(5).toString('hex')}`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Call {
  readonly scheduleId: string;
  readonly recover: boolean;
  readonly at: number;
}

/** A clock over a scripted fireDue: each schedule answers what `answer` says for its nth call. */
function scriptedClock(answer: (scheduleId: string, call: number) => ScheduleWake | Error) {
  const calls: Call[] = [];
  const fireDue: FireDue = async (scheduleId, recover) => {
    const n = calls.filter((c) => c.scheduleId === scheduleId).length;
    calls.push({ scheduleId, recover, at: Date.now() });
    const result = answer(scheduleId, n);
    if (result instanceof Error) throw result;
    return result;
  };
  const id = unique();
  const clock = new TemporalScheduleClock(fireDue, { address, namespace, taskQueue: id, workflowIdPrefix: `${id}-` });
  return { clock, calls, prefix: `${id}-`, taskQueue: id };
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

  it('wakes a schedule at each due time fireDue answers, recovering only on the first wake of a start', async () => {
    const s = await started(scriptedClock((_, n) => (n < 3 ? { nextDueAt: Date.now() + 400 } : { nextDueAt: Date.now() + 3_600_000 })));
    await s.clock.ensure(['sched_a']);
    await until('four wakes', () => s.calls.length >= 4);
    expect(s.calls.map((c) => c.recover)).toEqual([true, false, false, false]);
    const gaps = s.calls.slice(1).map((c, i) => c.at - s.calls[i].at);
    for (const gap of gaps) expect(gap).toBeGreaterThanOrEqual(350);
    // Then the next due time is an hour away: no wake meanwhile.
    await sleep(1000);
    expect(s.calls).toHaveLength(4);
  });

  it('wakes at once on a change, leaves an open workflow unwoken by ensure, and waits while paused', async () => {
    let paused = false;
    const s = await started(scriptedClock(() => (paused ? {} : { nextDueAt: Date.now() + 3_600_000 })));
    await s.clock.ensure(['sched_b']);
    await until('the first wake', () => s.calls.length === 1);
    await s.clock.ensure(['sched_b']);
    await sleep(800);
    expect(s.calls).toHaveLength(1);
    const changedAt = Date.now();
    paused = true;
    await s.clock.changed('sched_b');
    await until('the wake of the change', () => s.calls.length === 2);
    expect(s.calls[1].at - changedAt).toBeLessThan(3000);
    // Paused (no next due time): asleep until the next change, however long.
    await sleep(2000);
    expect(s.calls).toHaveLength(2);
    paused = false;
    await s.clock.changed('sched_b');
    await until('the wake of the resume', () => s.calls.length === 3);
    const description = await client.workflow.getHandle(`${s.prefix}sched_b`).describe();
    expect(description.status.name).toBe('RUNNING');
  });

  it('ends the workflow of a schedule that is gone, and starts a fresh one for it on a change', async () => {
    let gone = true;
    const s = await started(scriptedClock(() => (gone ? { gone: true } : { nextDueAt: Date.now() + 3_600_000 })));
    await s.clock.ensure(['sched_c']);
    const handle = client.workflow.getHandle(`${s.prefix}sched_c`);
    await handle.result();
    expect((await handle.describe()).status.name).toBe('COMPLETED');
    gone = false;
    await s.clock.changed('sched_c');
    await until('the fresh run', () => s.calls.length === 2);
    expect(s.calls[1].recover).toBe(true);
  });

  it('retries a failed fireDue, asking it to recover, and keeps the error text out of the history', async () => {
    const s = await started(
      scriptedClock((_, n) =>
        n === 1 ? new Error('token sk-secret-canary in a message') : { nextDueAt: n === 0 ? Date.now() + 200 : Date.now() + 3_600_000 },
      ),
    );
    await s.clock.ensure(['sched_d']);
    await until('the retry', () => s.calls.length >= 3);
    expect(s.calls.map((c) => c.recover)).toEqual([true, false, true]);
    const history = await client.workflow.getHandle(`${s.prefix}sched_d`).fetchHistory();
    expect(JSON.stringify(history)).not.toContain('sk-secret-canary');
  });

  it('answers ping once started, and not before', async () => {
    const s = scriptedClock(() => ({}));
    await expect(s.clock.ping()).rejects.toThrow(/not connected/);
    await started(s);
    await expect(s.clock.ping()).resolves.toBeUndefined();
  });
});
