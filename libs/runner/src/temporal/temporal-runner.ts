import type { WorkflowExecutionDescription } from '@temporalio/client';
import { WorkflowNotFoundError } from '@temporalio/client';
import type { WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { AGENT_WORKFLOW_ID_PREFIX, agentTurnWorkflow, agentTurnWorkflowId, wakeSignal } from '@app/workflows';
import type { DurableRunner, StepFunction, TurnOf } from '../durable-runner.port';
import { createActivities } from './activities';
import type { RunningWorker } from './temporal-worker';
import { startTemporalWorker, stopTemporalWorker } from './temporal-worker';

export interface TemporalRunnerOptions {
  /** host:port of the Temporal frontend. */
  readonly address: string;
  readonly namespace?: string;
  readonly taskQueue?: string;
  /** The turn a task is on: its workflow's id is the prefix, the task id and this number. */
  readonly turnOf: TurnOf;
  /** Workflow ids start with this (default `agent-`); tests use a prefix of their own. */
  readonly workflowIdPrefix?: string;
  /**
   * How often a running step heartbeats, and the longest the worker holds a heartbeat back: an
   * abort reaches a running step within about this long.
   */
  readonly heartbeatIntervalMs?: number;
  /** How often idle() and abort() look at the workflows' state. */
  readonly pollIntervalMs?: number;
  /** Defaults to the workflow module next to its source; a pre-built bundle skips bundling. */
  readonly workflowBundle?: WorkflowBundleWithSourceMap;
  /**
   * On stop(), how long steps running here may go on before they are cancelled (and retried by
   * another worker); meanwhile the worker takes no new step, and a batch of steps ends after the
   * one that runs. Default 0: cancelled at once.
   */
  readonly shutdownGraceMs?: number;
  /** A step that failed (retried by Temporal), a client call that failed, or the worker itself (`*`). */
  readonly onError?: (taskId: string, error: unknown) => void;
}

/** describe() calls idle() makes at once. */
const DESCRIBE_BATCH = 16;

const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The distributed mode's durable runner: one `agentTurnWorkflow` per turn of a task on a Temporal
 * server, whose activity runs the step function in whichever worker of the task queue picks it up.
 * Durability comes from Temporal (a step interrupted by a crash is retried elsewhere) and, as in
 * the in-process runner, from steps re-reading the event stream.
 */
export class TemporalRunner implements DurableRunner {
  private started?: RunningWorker;
  private starting?: Promise<RunningWorker>;
  private stopped = false;
  private workerError?: unknown;
  /** Steps running in this process's worker. */
  private stepsInFlight = 0;
  /** Client calls per task, chained so that an abort never overtakes the notify before it. */
  private readonly calls = new Map<string, Promise<void>>();
  /**
   * Workflows this runner started or signalled that may still be open, each with the generation
   * of its last signal: describe() forgets a closed one only if no signal went out meanwhile.
   */
  private readonly open = new Map<string, number>();
  /** Bumped by every client call and signal: idle() trusts a round only if it did not move. */
  private generation = 0;
  /** Notified before start(): start() sends them with the active tasks. */
  private readonly early = new Set<string>();

  private readonly namespace: string;
  private readonly taskQueue: string;
  private readonly prefix: string;
  private readonly heartbeatIntervalMs: number;
  private readonly pollIntervalMs: number;
  private readonly onError: (taskId: string, error: unknown) => void;

  constructor(
    private readonly step: StepFunction,
    private readonly activeTaskIds: () => string[],
    private readonly options: TemporalRunnerOptions,
  ) {
    this.namespace = options.namespace ?? 'default';
    this.taskQueue = options.taskQueue ?? 'agent-loop';
    this.prefix = options.workflowIdPrefix ?? AGENT_WORKFLOW_ID_PREFIX;
    this.heartbeatIntervalMs = options.heartbeatIntervalMs ?? 1000;
    this.pollIntervalMs = options.pollIntervalMs ?? 25;
    this.onError = options.onError ?? (() => undefined);
  }

  /** Resolves once the Temporal server answers (readiness); rejects before start() has connected. */
  async ping(): Promise<void> {
    if (!this.started) throw new Error('not connected to Temporal yet');
    await this.started.connection.workflowService.getSystemInfo({});
  }

  async start(): Promise<void> {
    this.stopped = false;
    this.starting ??= this.connectAndRun();
    this.started = await this.starting.catch((error: unknown) => {
      this.starting = undefined;
      throw error;
    });
    const taskIds = new Set([...this.activeTaskIds(), ...this.early]);
    this.early.clear();
    for (const taskId of taskIds) this.notify(taskId);
    await this.settleCalls();
  }

  notify(taskId: string): void {
    if (this.stopped) return;
    if (!this.started) {
      this.early.add(taskId);
      return;
    }
    const { client } = this.started;
    this.enqueue(taskId, async () => {
      const turn = { taskId, turn: await this.options.turnOf(taskId) };
      const workflowId = agentTurnWorkflowId(this.prefix, turn);
      // Starts the turn's workflow, or only signals it when it is already open: one loop per turn.
      await client.workflow.signalWithStart(agentTurnWorkflow, {
        workflowId,
        taskQueue: this.taskQueue,
        args: [turn],
        signal: wakeSignal,
        signalArgs: [],
      });
      this.open.set(workflowId, ++this.generation);
    });
  }

  abort(taskId: string, turn?: number): void {
    if (this.stopped || !this.started) return;
    const { client } = this.started;
    this.enqueue(taskId, async () => {
      const workflowId = agentTurnWorkflowId(this.prefix, { taskId, turn: turn ?? (await this.options.turnOf(taskId)) });
      try {
        // Temporal cancellation: the step in flight sees its signal on its next heartbeat, one
        // not yet started never runs, and the workflow ends as cancelled.
        await client.workflow.getHandle(workflowId).cancel();
      } catch (error) {
        if (!(error instanceof WorkflowNotFoundError)) throw error; // no open workflow: nothing runs
      }
      this.open.set(workflowId, ++this.generation);
    });
  }

  /**
   * Resolves once no client call is under way, no step runs in this process, and none of the
   * workflows this runner addressed has a step scheduled or running or a workflow task pending.
   * A workflow waiting for a wake or a deadline counts as idle, as a sleeping in-process loop does.
   * Each round costs one describe() per open workflow of this runner, never a listing.
   */
  async idle(): Promise<void> {
    for (;;) {
      await this.settleCalls();
      if (this.workerError) throw this.workerError;
      const round = this.generation;
      let busy = this.stepsInFlight > 0;
      const ids = [...this.open.keys()];
      for (let i = 0; i < ids.length && !busy; i += DESCRIBE_BATCH) {
        const states = await Promise.all(ids.slice(i, i + DESCRIBE_BATCH).map((id) => this.describe(id)));
        busy = states.some((state) => state && (state.raw.pendingWorkflowTask || (state.raw.pendingActivities ?? []).length > 0));
      }
      if (!busy && round === this.generation && this.calls.size === 0 && this.stepsInFlight === 0) return;
      await delay(this.pollIntervalMs);
    }
  }

  stepsRunning(): number {
    return this.stepsInFlight;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    const started = this.started ?? (await this.starting?.catch(() => undefined));
    await this.settleCalls();
    this.started = undefined;
    this.starting = undefined;
    this.open.clear();
    if (!started) return;
    // The worker polls no more. A step still running may finish for shutdownGraceMs (its batch
    // ends with it, so the workflow hands the next step to another worker); then it sees its
    // signal abort, and Temporal retries it on the next worker of the queue.
    await stopTemporalWorker(started);
  }

  private connectAndRun(): Promise<RunningWorker> {
    this.workerError = undefined;
    return startTemporalWorker({
      address: this.options.address,
      namespace: this.namespace,
      taskQueue: this.taskQueue,
      workflowBundle: this.options.workflowBundle,
      activities: createActivities({
        step: this.countedStep,
        onError: this.onError,
        heartbeatIntervalMs: this.heartbeatIntervalMs,
        stopping: () => this.stopped,
      }),
      heartbeatIntervalMs: this.heartbeatIntervalMs,
      shutdownGraceMs: this.options.shutdownGraceMs ?? 0,
      onWorkerError: (error) => {
        this.workerError = error;
        this.onError('*', error);
      },
    });
  }

  private readonly countedStep: StepFunction = async (taskId, signal, turn) => {
    this.stepsInFlight++;
    try {
      return await this.step(taskId, signal, turn);
    } finally {
      this.stepsInFlight--;
    }
  };

  private enqueue(taskId: string, call: () => Promise<void>): void {
    this.generation++;
    const previous = this.calls.get(taskId) ?? Promise.resolve();
    const next = previous.then(call).catch((error: unknown) => this.onError(taskId, error));
    this.calls.set(taskId, next);
    void next.finally(() => {
      if (this.calls.get(taskId) === next) this.calls.delete(taskId);
    });
  }

  private async settleCalls(): Promise<void> {
    while (this.calls.size > 0) await Promise.all([...this.calls.values()]);
  }

  /** The workflow's latest run while it is open; undefined (and forgotten) once it is closed. */
  private async describe(workflowId: string): Promise<WorkflowExecutionDescription | undefined> {
    const client = this.started?.client;
    if (!client) return undefined;
    const seen = this.open.get(workflowId);
    try {
      const description = await client.workflow.getHandle(workflowId).describe();
      if (description.status.name === 'RUNNING') return description;
    } catch (error) {
      if (!(error instanceof WorkflowNotFoundError)) throw error;
    }
    if (seen !== undefined && this.open.get(workflowId) === seen) this.open.delete(workflowId);
    return undefined;
  }
}
