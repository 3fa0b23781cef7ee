import { BeforeApplicationShutdown, Inject, Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { TaskSecrets, runWithLogContext, taskIdOf } from '@app/common';
import { MESSAGE_BUS, MessageBus, busConfigFromEnv } from '@app/bus';
import { SANDBOX_LEASES_BUCKET } from '@app/contracts';
import { createCoordinationStore } from '@app/coordination';
import { EVENT_STORE, EventStore, StoredEvent } from '@app/event-store';
import { Readiness, ServiceMetrics } from '@app/metrics';
import { MODEL_PROVIDER, ModelProvider } from '@app/model-provider';
import { TaskViewsStore } from '@app/read-models';
import { DurableRunner, createDurableRunner, logTemporalThroughNest, runnerConfigFromEnv } from '@app/runner';
import { RUNTIME_ENV, logLevelFromEnv } from '@app/runtime';
import { TaskCommandExecutor } from '@app/task-commands';
import { toTaskEvent } from '@app/task-domain';
import { agentLoopConfigFromEnv } from './agent-loop.config';
import { AgentStep } from './agent-step';
import { SandboxHolderWatch } from './sandbox-holder-watch';
import { traceStep } from './traced-step';
import { TurnAdmission } from './turn-admission';

import { turnOf } from './turn-of';

/** Events after which a task's loop may have new work. */
const WAKING_EVENTS = new Set(['TaskCreated', 'TurnStarted', 'TurnResumed', 'ToolCallDecided', 'UserMessageAdded']);
/** Events that end a task's turn for good: whatever still runs for it is aborted, its turn's loop ended. */
const ENDING_EVENTS = new Set(['TaskCancelled']);
/** The turn a TaskCancelled ended: an interrupt starts the next one in the same append, so "the turn the task is on" is no longer it. */
function endedTurn(e: StoredEvent): number | undefined {
  const event = toTaskEvent(e);
  return event.type === 'TaskCancelled' ? event.data.turn : undefined;
}

/** Events that free a running slot of the tenant (MAX_RUNNING_TASKS_PER_TENANT): the next in line may start. */
const SLOT_FREEING_EVENTS = new Set(['TurnCompleted', 'TaskFailed', 'TaskCancelled']);

@Injectable()
export class AgentRunnerService implements OnApplicationBootstrap, OnModuleDestroy, BeforeApplicationShutdown {
  private readonly logger = new Logger('AgentRunner');
  private readonly runner: DurableRunner;
  private readonly admission?: TurnAdmission;
  private readonly holderWatch?: SandboxHolderWatch;
  private unsubscribe?: () => void;

  constructor(
    @Inject(EVENT_STORE) private readonly store: EventStore,
    @Inject(MESSAGE_BUS) bus: MessageBus,
    @Inject(MODEL_PROVIDER) model: ModelProvider,
    @Inject(RUNTIME_ENV) env: NodeJS.ProcessEnv,
    commands: TaskCommandExecutor,
    secrets: TaskSecrets,
    private readonly views: TaskViewsStore,
    readiness: Readiness,
    metrics: ServiceMetrics,
  ) {
    const config = agentLoopConfigFromEnv(env);
    if (config.maxRunningTurnsPerTenant !== undefined) this.admission = new TurnAdmission(views, config.maxRunningTurnsPerTenant);
    // Sandbox instances are processes of their own only with NATS: then one can die under a call.
    if (busConfigFromEnv(env).kind === 'nats') {
      this.holderWatch = new SandboxHolderWatch(createCoordinationStore({ bucket: SANDBOX_LEASES_BUCKET }, env));
    }
    const holders = this.holderWatch && { watch: this.holderWatch, onLost: () => metrics.toolCallsLost.inc() };
    const step = new AgentStep(commands, model, bus, secrets, config, this.admission, holders);
    const runnerConfig = runnerConfigFromEnv(env);
    if (runnerConfig.kind === 'temporal') logTemporalThroughNest(logLevelFromEnv(env));
    this.runner = createDurableRunner(runnerConfig, {
      // Each step is its own log scope: its lines carry the task (and the turn, once read).
      step: traceStep((taskId, signal, turn) => runWithLogContext({ taskId, turn }, () => step.run(taskId, signal, turn))),
      activeTaskIds: () => this.views.activeTaskIds(),
      turnOf: async (taskId) => turnOf((await commands.load(taskId)).state),
      onError: (taskId, error) =>
        runWithLogContext({ taskId }, () =>
          this.logger.error(`task ${taskId}: step failed: ${error instanceof Error ? error.message : String(error)}`),
        ),
    });

    const runner = this.runner;
    if (runner.ping) readiness.add('temporal', () => runner.ping!());
  }

  get durableRunner(): DurableRunner {
    return this.runner;
  }

  async onApplicationBootstrap(): Promise<void> {
    this.unsubscribe = this.store.onAppended((events) => this.route(events));
    await this.runner.start();
  }

  /**
   * The first of the shutdown: no new step starts (in-process), while the steps running go on. In
   * the all-in-one process this runs before the sandbox's own onModuleDestroy (Nest destroys the
   * root's imports last to first, and StandaloneModule imports the sandbox before the
   * orchestrator), which lets the tool calls running finish for the grace time: a step started in
   * that time would send a call nobody takes any more, and find it interrupted at the next start.
   */
  onModuleDestroy(): void {
    this.runner.drain?.();
  }

  /**
   * Before any service's shutdown hook: the steps the runner lets finish still need the bus and
   * the event store, which RuntimeModule closes in its own.
   */
  async beforeApplicationShutdown(): Promise<void> {
    this.unsubscribe?.();
    const running = this.runner.stepsRunning?.() ?? 0;
    if (running > 0) this.logger.log(`stopping with ${running} step(s) running: they finish or are handed back to another worker`);
    await this.runner.stop();
    await this.holderWatch?.close();
  }

  private route(events: readonly StoredEvent[]): void {
    for (const e of events) {
      const taskId = taskIdOf(e.streamId);
      if (taskId === undefined) continue;
      if (ENDING_EVENTS.has(e.type)) this.runner.abort(taskId, endedTurn(e));
      if (WAKING_EVENTS.has(e.type)) this.runner.notify(taskId);
      if (SLOT_FREEING_EVENTS.has(e.type)) this.wakeHeadOfLine(taskId);
    }
  }

  /**
   * A turn ended: the first waiting tasks of its tenant look again (the task itself among them
   * when its next message is first). Every orchestrator does this; a task woken twice only asks
   * twice.
   */
  private wakeHeadOfLine(taskId: string): void {
    const tenantId = this.views.get(taskId)?.tenantId;
    if (!this.admission || tenantId === undefined) return;
    this.admission.headOfLine(tenantId).then(
      (taskIds) => taskIds.forEach((id) => this.runner.notify(id)),
      (error: unknown) =>
        this.logger.error(`waking the tasks waiting after ${taskId}: ${error instanceof Error ? error.message : String(error)}`),
    );
  }
}
