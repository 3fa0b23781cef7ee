import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { createServer } from 'node:net';
import { Client, Connection, defaultPayloadConverter } from '@temporalio/client';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { DefaultLogger, Runtime, Worker, bundleWorkflowCode } from '@temporalio/worker';
import { agentTurnWorkflow } from '@app/workflows';
import type { StepFunction, StepOutcome, TurnOf } from '../durable-runner.port';
import { TemporalUnreachableError } from '../runner.errors';
import { describeRunnerContract } from '../testing/runner.contract';
import { createActivities } from './activities';
import { TemporalRunner } from './temporal-runner';

// Against a real Temporal dev server: `export TEMPORAL_ADDRESS=$(bash infra/dev/ensure-temporal.sh)`.
// Every test gets a task queue and workflow ids of its own, so runs never see each other's
// workflows, even in the dev server's persistent database. TestWorkflowEnvironment.createTimeSkipping()
// is not used: it downloads a test server binary on first use, and nothing may download at test time.

const address = process.env.TEMPORAL_ADDRESS ?? '';
const namespace = 'default';

// Bundling the workflow code (first runner of the process) and starting workers take seconds.
jest.setTimeout(60_000);

// Temporal's workers log every start and stop at INFO.
Runtime.install({ logger: new DefaultLogger('WARN') });

beforeAll(async () => {
  if (!address) {
    throw new Error('TEMPORAL_ADDRESS is not set: run `export TEMPORAL_ADDRESS=$(bash infra/dev/ensure-temporal.sh)` first');
  }
  const connection = await Connection.connect({ address, connectTimeout: 5_000 }).catch((error: Error) => {
    throw new Error(
      `no Temporal server answers on TEMPORAL_ADDRESS=${address} (${error.message}); start one with infra/dev/ensure-temporal.sh`,
    );
  });
  await connection.close();
});

const unique = () => `ats-test-${randomBytes(5).toString('hex')}`;

/** Ends the workflows a test left open (a task in 'wait'), so the dev server's database stays small. */
async function terminateOpen(taskQueue: string): Promise<void> {
  const connection = await Connection.connect({ address });
  try {
    const client = new Client({ connection, namespace });
    for await (const wf of client.workflow.list({ query: `TaskQueue = '${taskQueue}' AND ExecutionStatus = 'Running'` })) {
      await client.workflow
        .getHandle(wf.workflowId)
        .terminate('test finished')
        .catch(() => undefined);
    }
  } finally {
    await connection.close();
  }
}

/** A runner on a task queue and workflow id prefix of its own (both `id`). */
function testRunner(step: StepFunction, activeTaskIds: () => string[], turnOf: TurnOf) {
  const id = unique();
  const runner = new TemporalRunner(step, activeTaskIds, {
    address,
    namespace,
    taskQueue: id,
    workflowIdPrefix: `${id}-`,
    turnOf,
    heartbeatIntervalMs: 100,
    pollIntervalMs: 10,
  });
  return {
    id,
    runner,
    cleanup: async () => {
      await runner.stop();
      await terminateOpen(id);
    },
  };
}

describeRunnerContract('temporal', async (step, activeTaskIds, turnOf) => testRunner(step, activeTaskIds, turnOf));

describe('TemporalRunner: one workflow per turn', () => {
  let fixture: ReturnType<typeof testRunner> | undefined;
  afterEach(async () => fixture?.cleanup());

  /** The workflows of the fixture's task queue: id -> status. */
  async function workflowsOf(taskQueue: string): Promise<Record<string, string>> {
    const connection = await Connection.connect({ address });
    try {
      const client = new Client({ connection, namespace });
      const found: Record<string, string> = {};
      // Visibility is eventually consistent: look until every workflow shows its final status.
      for (let attempt = 0; attempt < 50; attempt++) {
        for await (const wf of client.workflow.list({ query: `TaskQueue = '${taskQueue}'` })) found[wf.workflowId] = wf.status.name;
        if (Object.keys(found).length > 0 && !Object.values(found).includes('RUNNING')) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      return found;
    } finally {
      await connection.close();
    }
  }

  it('runs each turn as its own workflow, its id made of the task id and turn number, passing the turn to the step', async () => {
    let turn = 1;
    const asked: (number | undefined)[] = [];
    const step: StepFunction = async (_taskId, _signal, forTurn) => {
      asked.push(forTurn);
      return 'idle';
    };
    fixture = testRunner(
      step,
      () => [],
      async () => turn,
    );
    await fixture.runner.start();
    fixture.runner.notify('task1');
    await fixture.runner.idle();
    turn = 2;
    fixture.runner.notify('task1');
    await fixture.runner.idle();
    expect(asked).toEqual([1, 2]);
    expect(await workflowsOf(fixture.id)).toEqual({
      [`${fixture.id}-task1-turn-1`]: 'COMPLETED',
      [`${fixture.id}-task1-turn-2`]: 'COMPLETED',
    });
  });

  it('cancels the turn through Temporal cancellation: the step in flight sees its abort and the workflow ends cancelled', async () => {
    let markStarted: () => void = () => undefined;
    const started = new Promise<void>((resolve) => (markStarted = resolve));
    let aborted = false;
    const step: StepFunction = (_taskId, signal) =>
      new Promise((resolve) => {
        markStarted();
        signal.addEventListener('abort', () => {
          aborted = true;
          resolve('idle');
        });
      });
    fixture = testRunner(
      step,
      () => [],
      async () => 3,
    );
    await fixture.runner.start();
    fixture.runner.notify('task2');
    await started;
    fixture.runner.abort('task2');
    await fixture.runner.idle();
    expect(aborted).toBe(true);
    expect(await workflowsOf(fixture.id)).toEqual({ [`${fixture.id}-task2-turn-3`]: 'CANCELLED' });
  });

  it('cancelling a turn whose workflow already ended is a no-op, and a later notify still runs the task', async () => {
    const ran: string[] = [];
    fixture = testRunner(
      async (taskId) => (ran.push(taskId), 'idle'),
      () => [],
      async () => 1,
    );
    await fixture.runner.start();
    fixture.runner.notify('task3');
    await fixture.runner.idle();
    fixture.runner.abort('task3');
    fixture.runner.abort('never-started');
    await fixture.runner.idle();
    fixture.runner.notify('task3');
    await fixture.runner.idle();
    expect(ran).toEqual(['task3', 'task3']);
  });
});

describe('agentTurnWorkflow on a Temporal dev server', () => {
  let env: TestWorkflowEnvironment;
  let workflowBundle: Awaited<ReturnType<typeof bundleWorkflowCode>>;

  beforeAll(async () => {
    env = await TestWorkflowEnvironment.createFromExistingServer({ address, namespace });
    workflowBundle = await bundleWorkflowCode({
      workflowsPath: require.resolve('../../../workflows/src/agent-turn.workflow'),
      logger: Runtime.instance().logger,
    });
  });
  afterAll(async () => env?.teardown());

  /** Runs one workflow to its end on a worker of its own with scripted step outcomes. */
  async function run(taskId: string, outcomes: (() => StepOutcome | Error)[]) {
    const taskQueue = unique();
    const calls: number[] = [];
    const worker = await Worker.create({
      connection: env.nativeConnection,
      namespace,
      taskQueue,
      workflowBundle,
      activities: createActivities({
        step: async () => {
          calls.push(Date.now());
          const next = outcomes.shift()?.() ?? 'idle';
          if (next instanceof Error) throw next;
          return next;
        },
      }),
    });
    const workflowId = `${taskQueue}-${taskId}`;
    await worker.runUntil(env.client.workflow.execute(agentTurnWorkflow, { workflowId, taskQueue, args: [{ taskId, turn: 1 }] }));
    const history = await env.client.workflow.getHandle(workflowId).fetchHistory();
    return { calls, history };
  }

  it('sleeps on a durable timer until a waitUntil deadline, looks again, and ends when the task is idle', async () => {
    const { calls, history } = await run('deadline', [() => ({ waitUntil: Date.now() + 1_000 }), () => 'idle']);
    expect(calls).toHaveLength(2);
    expect(calls[1] - calls[0]).toBeGreaterThanOrEqual(900);
    const events = history.events ?? [];
    expect(events.filter((e) => e.timerStartedEventAttributes)).toHaveLength(1);
    expect(events.filter((e) => e.timerFiredEventAttributes)).toHaveLength(1);
    // The input is the task id and turn and nothing else: the step reads everything else from the stream.
    const started = events[0].workflowExecutionStartedEventAttributes;
    expect(started?.input?.payloads?.map((p) => defaultPayloadConverter.fromPayload(p))).toEqual([{ taskId: 'deadline', turn: 1 }]);
  });

  it('keeps a failed step’s error text out of the history: only the error class is recorded', async () => {
    const leaky = new TypeError('could not reach https://user:sk-live-hunter2@example.com');
    const { calls, history } = await run('failing', [() => leaky, () => 'idle']);
    expect(calls).toHaveLength(2);
    const text = JSON.stringify(history);
    expect(text).not.toContain('hunter2');
    expect(text).toContain('TypeError');
  });

  it('runs a run of continuing steps inside one activity: one Temporal round trip, not one per step', async () => {
    const { calls, history } = await run('batched', [() => 'continue', () => 'continue', () => 'continue', () => 'continue', () => 'idle']);
    expect(calls).toHaveLength(5);
    const scheduled = (history.events ?? []).filter((e) => e.activityTaskScheduledEventAttributes);
    expect(scheduled).toHaveLength(1);
  });
});

describe('TemporalRunner: no Temporal server at TEMPORAL_ADDRESS', () => {
  /** A loopback port nobody listens on (listened on, then closed). */
  const closedPort = () =>
    new Promise<number>((resolve, reject) => {
      const server = createServer();
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => {
        const { port } = server.address() as AddressInfo;
        server.close(() => resolve(port));
      });
    });

  it('fails to start with an error naming TEMPORAL_ADDRESS and the address it tried', async () => {
    const address = `127.0.0.1:${await closedPort()}`;
    const runner = new TemporalRunner(
      async () => 'idle',
      () => [],
      { address, turnOf: async () => 1 },
    );
    const error = await runner.start().then(
      () => undefined,
      (e: unknown) => e,
    );
    // The SDK's own message ("Failed to connect before the deadline") says where to look no more.
    expect((error as Error).message).toMatch(new RegExp(`^cannot reach Temporal at TEMPORAL_ADDRESS=${address}: .+`));
    expect(error).toBeInstanceOf(TemporalUnreachableError);
    await runner.stop();
  });
});
