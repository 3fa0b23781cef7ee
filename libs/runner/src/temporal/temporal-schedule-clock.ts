import { ApplicationFailure, Context } from '@temporalio/activity';
import type { WorkflowBundleWithSourceMap } from '@temporalio/worker';
import type { ScheduleActivities } from '@app/workflows';
import {
  SCHEDULE_SHARDS,
  scheduleChangedSignal,
  scheduleClockWorkflow,
  scheduleClockWorkflowId,
  scheduleRescanSignal,
  scheduleShardOf,
} from '@app/workflows';
import type { FireSchedules, ScheduleClock } from '../schedule-clock.port';
import type { RunningWorker } from './temporal-worker';
import { startTemporalWorker, stopTemporalWorker } from './temporal-worker';

export interface TemporalScheduleClockOptions {
  /** host:port of the Temporal frontend. */
  readonly address: string;
  readonly namespace?: string;
  /** The schedules' own task queue: their worker runs where fireSchedules can start tasks (the API). */
  readonly taskQueue: string;
  /** Shards of the schedules (default SCHEDULE_SHARDS); every process of a deployment must agree. */
  readonly shards?: number;
  /** How often a running look heartbeats (the workflow's heartbeat timeout is 5 s). */
  readonly heartbeatIntervalMs?: number;
  /**
   * How long a workflow task waits for the worker that ran the shard's last one before any
   * worker of the queue takes it: how soon a shard whose worker died wakes elsewhere.
   */
  readonly stickyTimeoutMs?: number;
  /** Defaults to the shared bundle of every workflow (workflow-bundle.ts). */
  readonly workflowBundle?: WorkflowBundleWithSourceMap;
  /** On stop(), how long a look running here may go on before it is cancelled (and retried elsewhere). */
  readonly shutdownGraceMs?: number;
  /** A look that failed as a whole (Temporal retries it): `shard <n>`, or the worker itself (`*`). */
  readonly onError?: (what: string, error: unknown) => void;
}

/**
 * The distributed mode's clock of schedules: the schedules are spread over a few shards, and one
 * `scheduleClockWorkflow` per shard on a Temporal server sleeps on a durable timer until the
 * earliest due time of its schedules, then has its activity fire every schedule due in whichever
 * worker of the schedules' queue picks it up. A process killed while it held a shard loses
 * nothing: the timer is the server's, and the activity or workflow task it held is retried on
 * another worker. Firing itself (exactly once per due time) is the caller's fireSchedules,
 * decided on each schedule's event stream.
 */
export class TemporalScheduleClock implements ScheduleClock {
  private started?: RunningWorker;
  private workerError?: unknown;
  private readonly shards: number;
  private readonly onError: (what: string, error: unknown) => void;

  constructor(
    private readonly fireSchedules: FireSchedules,
    private readonly options: TemporalScheduleClockOptions,
  ) {
    this.shards = options.shards ?? SCHEDULE_SHARDS;
    this.onError = options.onError ?? (() => undefined);
  }

  /** Connects and runs the worker of the schedules' queue. */
  async start(): Promise<void> {
    this.started ??= await this.connectAndRun();
  }

  /** Resolves once the Temporal server answers (readiness). */
  async ping(): Promise<void> {
    if (!this.started) throw new Error('not connected to Temporal yet');
    if (this.workerError) throw this.workerError;
    await this.started.connection.workflowService.getSystemInfo({});
  }

  /**
   * Starts the clock of every shard that has none, and has every shard look at all its schedules
   * from the store: an open clock keeps its timer and learns what it may have missed.
   */
  async rescan(): Promise<void> {
    const { client } = this.connected();
    await Promise.all(
      Array.from({ length: this.shards }, (_, shard) =>
        client.workflow.signalWithStart(scheduleClockWorkflow, {
          workflowId: scheduleClockWorkflowId(this.options.taskQueue, shard),
          taskQueue: this.options.taskQueue,
          args: [{ shard, shards: this.shards, rescan: true }],
          signal: scheduleRescanSignal,
          signalArgs: [],
        }),
      ),
    );
  }

  /** The schedule changed (created, updated, paused, resumed, deleted): its shard's clock looks at it now. */
  async changed(scheduleId: string): Promise<void> {
    const { client } = this.connected();
    const shard = scheduleShardOf(scheduleId, this.shards);
    // A shard's first start rescans: the store's list then holds this schedule too.
    await client.workflow.signalWithStart(scheduleClockWorkflow, {
      workflowId: scheduleClockWorkflowId(this.options.taskQueue, shard),
      taskQueue: this.options.taskQueue,
      args: [{ shard, shards: this.shards, rescan: true }],
      signal: scheduleChangedSignal,
      signalArgs: [scheduleId],
    });
  }

  async stop(): Promise<void> {
    const started = this.started;
    this.started = undefined;
    if (!started) return;
    await stopTemporalWorker(started);
  }

  private connected(): RunningWorker {
    if (!this.started) throw new Error('the schedule clock is not started');
    return this.started;
  }

  private activities(): ScheduleActivities {
    const heartbeatIntervalMs = this.options.heartbeatIntervalMs ?? 1000;
    return {
      fireSchedules: async (look) => {
        const context = Context.current();
        context.heartbeat();
        const beat = setInterval(() => context.heartbeat(), heartbeatIntervalMs);
        try {
          // A retry may follow an attempt that died between recording a run and starting it.
          const retried = context.info.attempt > 1;
          return await this.fireSchedules(retried ? { ...look, recover: look.scheduleIds } : look);
        } catch (error) {
          this.onError(`shard ${look.shard}`, error);
          // Only the error's class name enters the workflow's history: its text may quote a task.
          const type = error instanceof Error ? error.name : typeof error;
          throw ApplicationFailure.create({ type, message: `firing failed with ${type} (details in the worker's log)` });
        } finally {
          clearInterval(beat);
        }
      },
    };
  }

  private connectAndRun(): Promise<RunningWorker> {
    this.workerError = undefined;
    return startTemporalWorker({
      address: this.options.address,
      namespace: this.options.namespace ?? 'default',
      taskQueue: this.options.taskQueue,
      workflowBundle: this.options.workflowBundle,
      activities: this.activities(),
      heartbeatIntervalMs: this.options.heartbeatIntervalMs ?? 1000,
      stickyTimeoutMs: this.options.stickyTimeoutMs ?? 2000,
      shutdownGraceMs: this.options.shutdownGraceMs ?? 0,
      onWorkerError: (error) => {
        this.workerError = error;
        this.onError('*', error);
      },
    });
  }
}
