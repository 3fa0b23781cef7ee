import { randomBytes } from 'node:crypto';
import { Client, Connection, defaultPayloadConverter } from '@temporalio/client';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { DefaultLogger, Runtime, Worker, bundleWorkflowCode } from '@temporalio/worker';
import { agentTaskWorkflow } from '@app/workflows';
import { StepOutcome } from '../durable-runner.port';
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
    throw new Error(`no Temporal server answers on TEMPORAL_ADDRESS=${address} (${error.message}); start one with infra/dev/ensure-temporal.sh`);
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
      await client.workflow.getHandle(wf.workflowId).terminate('test finished').catch(() => undefined);
    }
  } finally {
    await connection.close();
  }
}

describeRunnerContract('temporal', async (step, activeTaskIds) => {
  const id = unique();
  const runner = new TemporalRunner(step, activeTaskIds, {
    address,
    namespace,
    taskQueue: id,
    workflowIdPrefix: `${id}-`,
    heartbeatIntervalMs: 100,
    pollIntervalMs: 10,
  });
  return {
    runner,
    cleanup: async () => {
      await runner.stop();
      await terminateOpen(id);
    },
  };
});

describe('agentTaskWorkflow on a Temporal dev server', () => {
  let env: TestWorkflowEnvironment;
  let workflowBundle: Awaited<ReturnType<typeof bundleWorkflowCode>>;

  beforeAll(async () => {
    env = await TestWorkflowEnvironment.createFromExistingServer({ address, namespace });
    workflowBundle = await bundleWorkflowCode({
      workflowsPath: require.resolve('../../../workflows/src/agent-task.workflow'),
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
    await worker.runUntil(env.client.workflow.execute(agentTaskWorkflow, { workflowId, taskQueue, args: [taskId] }));
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
    // The input is the task id and nothing else: the step reads everything else from the stream.
    const started = events[0].workflowExecutionStartedEventAttributes;
    expect(started?.input?.payloads?.map((p) => defaultPayloadConverter.fromPayload(p))).toEqual(['deadline']);
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
