import { ApplicationFailure, Context } from '@temporalio/activity';
import type { WorkflowBundleWithSourceMap } from '@temporalio/worker';
import type { ScheduleActivities } from '@app/workflows';
import { SCHEDULE_WORKFLOW_ID_PREFIX, scheduleChangedSignal, scheduleWorkflow, scheduleWorkflowId } from '@app/workflows';
import type { FireDue, ScheduleClock } from '../schedule-clock.port';
import type { RunningWorker } from './temporal-worker';
import { startTemporalWorker, stopTemporalWorker } from './temporal-worker';

export interface TemporalScheduleClockOptions {
  /** host:port of the Temporal frontend. */
  readonly address: string;
  readonly namespace?: string;
  /** The schedules' own task queue: their worker runs where fireDue can start tasks (the API). */
  readonly taskQueue: string;
  /** Workflow ids start with this (default `schedule-`), then the schedule's id. */
  readonly workflowIdPrefix?: string;
  /** How often a running fireDue heartbeats (the workflow's heartbeat timeout is 5 s). */
  readonly heartbeatIntervalMs?: number;
  /**
   * How long a workflow task waits for the worker that ran the schedule's last one before any
   * worker of the queue takes it: how soon a schedule whose worker died wakes elsewhere.
   */
  readonly stickyTimeoutMs?: number;
  /** Defaults to the shared bundle of every workflow (workflow-bundle.ts). */
  readonly workflowBundle?: WorkflowBundleWithSourceMap;
  /** On stop(), how long a fireDue running here may go on before it is cancelled (and retried elsewhere). */
  readonly shutdownGraceMs?: number;
  /** A fireDue that failed (Temporal retries it), or the worker itself (`*`). */
  readonly onError?: (scheduleId: string, error: unknown) => void;
}

/** Starts made at once by ensure(). */
const ENSURE_BATCH = 16;

/**
 * The distributed mode's clock of schedules: one `scheduleWorkflow` per schedule on a Temporal
 * server sleeps on a durable timer until the schedule's next due time, then has its activity fire
 * what is due in whichever worker of the schedules' queue picks it up. A process killed while it
 * held a schedule loses nothing: the timer is the server's, and the activity or workflow task it
 * held is retried on another worker. Firing itself (exactly once per due time) is the caller's
 * fireDue, decided on the schedule's event stream.
 */
export class TemporalScheduleClock implements ScheduleClock {
  private started?: RunningWorker;
  private stopped = false;
  private workerError?: unknown;
  private readonly prefix: string;
  private readonly onError: (scheduleId: string, error: unknown) => void;

  constructor(
    private readonly fireDue: FireDue,
    private readonly options: TemporalScheduleClockOptions,
  ) {
    this.prefix = options.workflowIdPrefix ?? SCHEDULE_WORKFLOW_ID_PREFIX;
    this.onError = options.onError ?? (() => undefined);
  }

  /** Connects and runs the worker of the schedules' queue. */
  async start(): Promise<void> {
    this.stopped = false;
    this.started ??= await this.connectAndRun();
  }

  /** Resolves once the Temporal server answers (readiness). */
  async ping(): Promise<void> {
    if (!this.started) throw new Error('not connected to Temporal yet');
    if (this.workerError) throw this.workerError;
    await this.started.connection.workflowService.getSystemInfo({});
  }

  /**
   * Makes sure each schedule has its workflow: starts the ones that have none (never started, or
   * the process stopped between recording the schedule and starting it) and leaves an open one
   * as it is, without waking it.
   */
  async ensure(scheduleIds: readonly string[]): Promise<void> {
    const { client } = this.connected();
    for (let i = 0; i < scheduleIds.length && !this.stopped; i += ENSURE_BATCH) {
      await Promise.all(
        scheduleIds.slice(i, i + ENSURE_BATCH).map((scheduleId) =>
          client.workflow.start(scheduleWorkflow, {
            workflowId: scheduleWorkflowId(this.prefix, scheduleId),
            taskQueue: this.options.taskQueue,
            args: [{ scheduleId, recover: true }],
            workflowIdConflictPolicy: 'USE_EXISTING',
          }),
        ),
      );
    }
  }

  /** The schedule changed (created, updated, paused, resumed, deleted): its workflow looks again now. */
  async changed(scheduleId: string): Promise<void> {
    const { client } = this.connected();
    await client.workflow.signalWithStart(scheduleWorkflow, {
      workflowId: scheduleWorkflowId(this.prefix, scheduleId),
      taskQueue: this.options.taskQueue,
      args: [{ scheduleId, recover: true }],
      signal: scheduleChangedSignal,
      signalArgs: [],
    });
  }

  async stop(): Promise<void> {
    this.stopped = true;
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
      fireDue: async ({ scheduleId, recover }) => {
        const context = Context.current();
        context.heartbeat();
        const beat = setInterval(() => context.heartbeat(), heartbeatIntervalMs);
        try {
          // A retry may follow an attempt that died between recording a run and starting it.
          return await this.fireDue(scheduleId, recover || context.info.attempt > 1);
        } catch (error) {
          this.onError(scheduleId, error);
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
