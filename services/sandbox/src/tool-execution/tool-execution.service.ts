import { Inject, Injectable, Logger, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { SecretVault, TaskSecrets, annotateLogContext, runWithLogContext, taskIdOf } from '@app/common';
import {
  ExecuteToolReply,
  ExecuteToolRequest,
  ListToolsRequest,
  PrepareWorkspaceReply,
  PrepareWorkspaceRequest,
  SUBJECTS,
  ToolCancelledNotice,
} from '@app/contracts';
import { EVENT_STORE, EventStore, StoredEvent } from '@app/event-store';
import { MESSAGE_BUS, MessageBus, Unsubscribe } from '@app/bus';
import { ServiceMetrics, secondsSince } from '@app/metrics';
import { ATTR, inSpan } from '@app/tracing';
import { ToolDefinition } from '@app/model-provider';
import { TaskCommandExecutor } from '@app/task-commands';
import { ExistingTask } from '@app/task-domain';
import { ArtifactScanner } from '../artifacts/artifact-scanner';
import { CheckpointCollector } from '../workspace/checkpoints/checkpoint-collector';
import type { StepCheckpoint } from '../workspace/checkpoints/task-checkpoints';
import { TaskCheckpoints } from '../workspace/checkpoints/task-checkpoints';
import { fitReply } from './fit-reply';
import { SANDBOX_SETTINGS, SandboxSettings, expirySweepIntervalMs } from '../config/sandbox-settings';
import { ProviderHealth, SANDBOX_PROVIDER, SandboxProvider } from '../provider/sandbox-provider.port';
import { SandboxLeases } from '../sessions/sandbox-leases';
import { SandboxRestoreError, SandboxSessions } from '../sessions/sandbox-sessions';
import { TaskPlacement } from '../sessions/task-placement';
import { AgentToolbox, TaskTools } from '../tools/agent-toolbox';
import { UnavailableServer } from '../tools/mcp/mcp-client-pool';
import { ToolContext } from '../tools/tool-spec';
import { placeUploads } from '../uploads/place-uploads';
import { UploadFetcher } from '../uploads/upload-fetcher';
import { CommandSetting, commandRunner } from './command-runner';
import { RequestDrain } from './request-drain';

/** What the reply says of the step's checkpoint. */
function checkpointFields(step: StepCheckpoint | undefined): Partial<ExecuteToolReply> {
  if (!step) return {};
  if ('skipped' in step) return { checkpointSkipped: step.skipped };
  return {
    ...(step.changes.length > 0 ? { changes: step.changes } : {}),
    ...(step.changesTruncated ? { changesTruncated: true as const } : {}),
    ...(step.checkpoint ? { checkpoint: step.checkpoint } : {}),
  };
}

/** A notice quotes at most this much of a server's error. */
const MAX_NOTICE_CHARS = 1_000;
/** How long a finished call's reply is kept for a late duplicate of its request. */
const RECENT_CALLS_MS = 60_000;
// File times come from the kernel's coarse clock, which may lag Date.now() by a tick.
const FILE_CLOCK_SLACK_MS = 1000;
const TURN_ENDING_EVENTS = new Set(['TurnCompleted', 'TaskFailed', 'TaskCancelled']);

/**
 * Answers the orchestrator's tool requests and prepares workspaces from staged uploads, each
 * inside the task's sandbox session (created, or restored from its snapshot, on demand). After
 * every call the files under downloads/ are stored and reported, so they become artifact events.
 */
@Injectable()
export class ToolExecutionService implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger('Sandbox');
  private readonly unsubscribes: Unsubscribe[] = [];
  /** Calls running on this instance, by callKey, so a cancelled (or lost) task's command can be killed. */
  private readonly running = new Map<string, { readonly taskId: string; readonly controller: AbortController }>();
  /** Each call (by callKey) runs once here however often it is delivered (a resend, a forward racing the original). */
  private readonly calls = new Map<string, Promise<ExecuteToolReply>>();
  /** Every request from its arrival (a call may wait for its task's lock or restore before it runs): see onModuleDestroy. */
  private readonly requests = new RequestDrain();
  private health: ProviderHealth = { ok: false, reason: 'not checked yet' };
  private sweepTimer?: NodeJS.Timeout;
  private sweeping?: Promise<unknown>;

  constructor(
    @Inject(MESSAGE_BUS) private readonly bus: MessageBus,
    @Inject(SANDBOX_PROVIDER) private readonly provider: SandboxProvider,
    @Inject(SANDBOX_SETTINGS) private readonly settings: SandboxSettings,
    private readonly sessions: SandboxSessions,
    private readonly leases: SandboxLeases,
    private readonly placement: TaskPlacement,
    private readonly scanner: ArtifactScanner,
    private readonly checkpoints: TaskCheckpoints,
    private readonly collector: CheckpointCollector,
    private readonly vault: SecretVault,
    private readonly secrets: TaskSecrets,
    private readonly commands: TaskCommandExecutor,
    private readonly uploads: UploadFetcher,
    private readonly toolbox: AgentToolbox,
    @Inject(EVENT_STORE) private readonly store: EventStore,
    private readonly metrics: ServiceMetrics,
  ) {}

  async onModuleInit(): Promise<void> {
    this.health = await this.provider.check();
    if (!this.health.ok) {
      this.logger.error(
        `sandbox provider "${this.provider.name}" does not work here: ${this.health.reason}. The shell tool is refused; ` +
          'install bubblewrap, or set SANDBOX_PROVIDER=unsafe-host to run commands WITHOUT isolation.',
      );
    } else if (this.provider.unsafe) {
      this.logger.warn(`sandbox provider "${this.provider.name}": commands run on the host WITHOUT isolation`);
    } else {
      this.logger.log(`sandbox provider "${this.provider.name}" ready; network ${this.settings.provider.network ? 'allowed' : 'off'}`);
    }
    for (const line of this.health.enforced ?? []) this.logger.log(`sandbox provider "${this.provider.name}" enforces ${line}`);
    for (const warning of this.health.warnings ?? []) this.logger.warn(`sandbox provider "${this.provider.name}": ${warning}`);
    const here = this.placement.instanceId;
    // Each request is its own log scope: its lines carry the task (and the call, and its turn once read).
    const scoped = <R extends { taskId: string; callId?: string }, T>(handler: (req: R) => Promise<T>) => {
      return this.requests.track((req: R) => runWithLogContext({ taskId: req.taskId, callId: req.callId }, () => handler(req)));
    };
    this.unsubscribes.push(
      this.bus.handle(
        SUBJECTS.sandboxListTools,
        scoped((req: ListToolsRequest) => this.definitions(req)),
      ),
      this.bus.handle(
        SUBJECTS.sandboxExecuteTool,
        scoped((req: ExecuteToolRequest) => this.execute(req)),
      ),
      this.bus.handle(
        SUBJECTS.sandboxPrepareWorkspace,
        scoped((req: PrepareWorkspaceRequest) => this.prepare(req)),
      ),
      this.bus.handle(
        SUBJECTS.sandboxInstanceExecuteTool(here),
        scoped((req: ExecuteToolRequest) => this.placement.onlyHere(req.taskId, () => this.executeHere(req))),
      ),
      this.bus.handle(
        SUBJECTS.sandboxInstancePrepareWorkspace(here),
        scoped((req: PrepareWorkspaceRequest) => this.placement.onlyHere(req.taskId, () => this.prepareHere(req))),
      ),
      this.bus.subscribe(SUBJECTS.sandboxToolCancelled, (notice: ToolCancelledNotice) =>
        this.running.get(callKey(notice))?.controller.abort(),
      ),
      this.store.onAppended((events) => this.closeEndedTurns(events)),
    );
    this.sweepTimer = setInterval(() => void this.sweep(), expirySweepIntervalMs(this.settings.sessions.idleTtlMs));
    this.sweepTimer.unref();
    this.leases.startRenewing((taskId) => this.stopCommandsOf(taskId));
  }

  /**
   * Takes no more calls and lets those it has finish and answer for the shutdown grace time,
   * running ones and those still waiting for their task's session (which, once their turn comes,
   * are refused as HandlerUnavailable: nothing ran, and the orchestrator sends them again). Those
   * still running then are stopped (as a cancel stops them) and answer so. Only then are the
   * leases given up: released earlier, another instance could take a task over while a command of
   * it still ran, or had yet to start, here.
   */
  async onModuleDestroy(): Promise<void> {
    clearInterval(this.sweepTimer);
    this.unsubscribes.forEach((u) => u());
    await this.finishRequests();
    await this.sweeping;
    await this.toolbox.closeAll();
    await this.provider.close?.();
    await this.leases.stop();
  }

  private async finishRequests(): Promise<void> {
    const graceMs = this.settings.shutdownGraceMs;
    if (this.requests.size > 0) {
      this.logger.log(
        `stopping with ${this.running.size} tool call(s) running and ${this.requests.size} request(s) in all: ` +
          `letting them finish (at most ${graceMs} ms)`,
      );
    }
    if ((await this.requests.drain(graceMs)) === 'finished') return;
    this.logger.warn(`stopping ${this.running.size} tool call(s) still running after ${graceMs} ms`);
    const stopped = Promise.allSettled([...this.calls.values()]);
    for (const { controller } of this.running.values()) controller.abort();
    // The commands stopped here answer before the leases go; a forward still waiting on another
    // instance, or a call still waiting for its workspace, is not waited for: the first is that
    // instance's, the second is refused when its turn comes (nothing runs here any more).
    await stopped;
  }

  async definitions(req: ListToolsRequest): Promise<ToolDefinition[]> {
    const { state } = await this.commands.load(req.taskId);
    if (!state.exists) return this.toolbox.definitions(this.taskTools(req.taskId, {}, {}));
    const unavailable: UnavailableServer[] = [];
    // For `{{secrets.NAME}}` in its MCP servers' headers; unopenable secrets answer SECRETS.UNAVAILABLE.
    const tools = await this.toolbox.definitions(
      this.taskTools(req.taskId, state.mcpServers, this.secrets.open(req.taskId, state)),
      unavailable,
    );
    await Promise.all(unavailable.map((u) => this.reportUnavailable(req.taskId, u)));
    return tools;
  }

  /** Tells the caller (a `notice`) why a server's tools are missing; a failure to record it costs only the notice. */
  private async reportUnavailable(taskId: string, { server, reason }: UnavailableServer): Promise<void> {
    const data = { server, reason: this.vault.redact(taskId, reason).slice(0, MAX_NOTICE_CHARS) };
    await this.commands.execute(taskId, { type: 'ReportMcpServerUnavailable', data }, { retries: 5 }).catch((error: unknown) => {
      this.logger.warn(
        `could not record that MCP server ${server} of ${taskId} is unavailable: ${error instanceof Error ? error.message : String(error)}`,
      );
    });
  }

  /** Runs the call on the instance holding the task's sandbox: here, or forwarded to it. */
  async execute(req: ExecuteToolRequest): Promise<ExecuteToolReply> {
    return this.placement.route(
      req.taskId,
      () => this.executeHere(req),
      (holder) =>
        this.bus.request<ExecuteToolRequest, ExecuteToolReply>(SUBJECTS.sandboxInstanceExecuteTool(holder), req, {
          timeoutMs: this.forwardTimeoutMs(),
        }),
    );
  }

  private executeHere(req: ExecuteToolRequest): Promise<ExecuteToolReply> {
    // MCP tools are named by each task's own servers: one label for them all keeps the series bounded.
    const tool = this.toolbox.isBuiltIn(req.toolName) ? req.toolName : this.toolbox.knows(req.toolName) ? 'mcp' : 'unknown';
    // The span names the tool, never its arguments or output (they can hold anything, secrets too).
    const attributes = { [ATTR.taskId]: req.taskId, [ATTR.toolCallId]: req.callId, [ATTR.toolName]: tool };
    return inSpan('tool.run', { attributes }, async (span) => {
      const startedAt = performance.now();
      const reply = await this.executeKnownHere(req);
      this.metrics.toolRunDuration.observe({ tool, status: reply.status }, secondsSince(startedAt));
      span.setAttribute(ATTR.toolStatus, reply.status);
      this.logger.debug(`${req.toolName} (${req.callId}) ended: ${reply.status} in ${reply.durationMs} ms`);
      return reply;
    });
  }

  private async executeKnownHere(req: ExecuteToolRequest): Promise<ExecuteToolReply> {
    const startedAt = Date.now();
    if (!this.toolbox.knows(req.toolName)) {
      const known = this.toolbox.builtInNames.join(', ');
      return {
        status: 'error',
        output: `Unknown tool "${req.toolName}". Available tools: ${known}, and those of the task's MCP servers.`,
        durationMs: 0,
      };
    }
    try {
      // A resend of a call that already ran (or runs) here waits its turn, then gets that run's reply: each call runs once.
      return await this.sessions.use(
        req.taskId,
        (workspaceRoot) => this.calls.get(callKey(req)) ?? this.runOnce(req, workspaceRoot, startedAt),
      );
    } catch (error) {
      if (!(error instanceof SandboxRestoreError)) throw error;
      return { status: 'error', output: this.vault.redact(req.taskId, error.message), durationMs: Date.now() - startedAt };
    }
  }

  private async runOnce(req: ExecuteToolRequest, workspaceRoot: string, startedAt: number): Promise<ExecuteToolReply> {
    // Its turn came while this instance stops: the lease is about to go, so another instance runs it.
    this.requests.assertAccepting(`call ${req.callId}`);
    // Registered before the task is read: a cancel published earlier is then already in the events.
    const controller = new AbortController();
    this.running.set(callKey(req), { taskId: req.taskId, controller });
    try {
      const { state } = await this.commands.load(req.taskId);
      const call = state.exists ? state.calls.find((c) => c.callId === req.callId) : undefined;
      if (call) annotateLogContext({ turn: call.turn });
      if (state.exists && call?.phase !== 'running') {
        return { status: 'error', output: 'Not run: the call is no longer running (the task was cancelled).', durationMs: 0 };
      }
      this.logger.debug(`running ${req.toolName} (${req.callId})`);
      const reply = this.runTool(req, state.exists ? state : undefined, workspaceRoot, controller.signal, startedAt);
      this.calls.set(callKey(req), reply);
      // Kept long enough for any resend of the same delivery; a failure not at all.
      reply.then(
        () => setTimeout(() => this.calls.delete(callKey(req)), RECENT_CALLS_MS).unref(),
        () => this.calls.delete(callKey(req)),
      );
      return await reply;
    } finally {
      this.running.delete(callKey(req));
    }
  }

  private async runTool(
    req: ExecuteToolRequest,
    state: ExistingTask | undefined,
    workspaceRoot: string,
    signal: AbortSignal,
    startedAt: number,
  ): Promise<ExecuteToolReply> {
    // Opened from the task's events with this instance's key; if it cannot, nothing runs (SECRETS.UNAVAILABLE).
    const secrets = state ? this.secrets.open(req.taskId, state) : {};
    const task = this.taskTools(req.taskId, state?.mcpServers ?? {}, secrets);
    const result = await this.toolbox.run(
      task,
      req.toolName,
      req.args ?? {},
      this.contextFor(req.taskId, workspaceRoot, { env: state?.env ?? {}, secrets, egressAllow: state?.network?.allow }, signal),
    );
    const redact = (text: string) => this.vault.redact(req.taskId, text);
    // Before the artifact scan: the reply may be sent only once the step's files are durable.
    const step = this.toolbox.mayChangeWorkspace(req.toolName)
      ? await this.checkpoints.afterStep(req.taskId, workspaceRoot, state?.lastCheckpoint)
      : undefined;
    const scan = await this.scanner
      .scan(req.taskId, workspaceRoot, state?.artifacts ?? {}, {
        redact,
        since: startedAt - FILE_CLOCK_SLACK_MS,
        stored: state?.storedArtifacts,
      })
      .catch((error: unknown) => {
        this.logger.error(
          redact(`downloads/ of ${req.taskId} could not be scanned: ${error instanceof Error ? error.message : String(error)}`),
        );
        return undefined;
      });
    const notes = scan?.notes.length ? `\n${scan.notes.map((n) => `[artifacts: ${n}]`).join('\n')}` : '';
    const output = redact(result.output) + notes;
    return fitReply({
      ...result,
      output,
      durationMs: Date.now() - startedAt,
      ...(scan ? { artifacts: scan.records, escapingLinks: scan.escapingLinks } : {}),
      ...checkpointFields(step),
    });
  }

  /** Places the uploads at the workspace root (ZIPs extracted), all or nothing, on the instance holding the task. */
  async prepare(req: PrepareWorkspaceRequest): Promise<PrepareWorkspaceReply> {
    return this.placement.route(
      req.taskId,
      () => this.prepareHere(req),
      (holder) =>
        this.bus.request<PrepareWorkspaceRequest, PrepareWorkspaceReply>(SUBJECTS.sandboxInstancePrepareWorkspace(holder), req, {
          timeoutMs: this.forwardTimeoutMs(),
        }),
    );
  }

  private async prepareHere(req: PrepareWorkspaceRequest): Promise<PrepareWorkspaceReply> {
    // The task is recorded only after this answers: its first checkpoint (the uploads) goes with it.
    const step = await this.sessions.use(req.taskId, async (root) => {
      this.requests.assertAccepting(`the uploads of ${req.taskId}`);
      await this.uploads.use(req.taskId, req.files, (local) =>
        placeUploads(local, root, this.settings.uploads, this.provider.fileOwner(req.taskId)),
      );
      return this.checkpoints.afterStep(req.taskId, root, undefined);
    });
    return { files: req.files.length, ...('checkpoint' in step && step.checkpoint ? { checkpoint: step.checkpoint } : {}) };
  }

  /** The task's sandbox went to another instance: nothing of it may keep running here. */
  private stopCommandsOf(taskId: string): void {
    for (const call of this.running.values()) if (call.taskId === taskId) call.controller.abort();
  }

  /** A forwarded request takes what the call itself may take: its command, a restore, the scan. */
  private forwardTimeoutMs(): number {
    return this.settings.provider.limits.timeoutMs + this.settings.sessions.snapshotTimeoutMs + 60_000;
  }

  private taskTools(taskId: string, mcpServers: TaskTools['mcpServers'], secrets: Readonly<Record<string, string>>): TaskTools {
    return { taskId, mcpServers, secrets };
  }

  /** A turn that ended no longer needs its MCP connections; the next turn connects again. */
  private closeEndedTurns(events: readonly StoredEvent[]): void {
    for (const e of events) {
      const taskId = taskIdOf(e.streamId);
      if (TURN_ENDING_EVENTS.has(e.type) && taskId !== undefined) void this.toolbox.closeTask(taskId);
    }
  }

  private contextFor(taskId: string, workspaceRoot: string, setting: CommandSetting, signal: AbortSignal): ToolContext {
    const base = { workspaceRoot, fileOwner: this.provider.fileOwner(taskId), signal };
    if (!this.health.ok)
      return { ...base, sandboxUnavailable: `sandbox provider "${this.provider.name}" does not work here (${this.health.reason})` };
    return { ...base, runCommand: commandRunner(this.provider, this.vault, taskId, setting, signal) };
  }

  private sweep(): Promise<unknown> {
    this.sweeping ??= this.sessions
      .expireIdle()
      .then((expired) => this.collector.afterExpiry(expired))
      .catch((error: unknown) => this.logger.error(`idle sandbox sweep failed: ${error instanceof Error ? error.message : String(error)}`))
      .finally(() => (this.sweeping = undefined));
    return this.sweeping;
  }
}

/**
 * Calls are told apart by task and id: a fork copies its source's calls with their ids, and runs
 * again those unfinished at its fork point, so one id can be running, or just have run, in two tasks.
 */
const callKey = ({ taskId, callId }: { readonly taskId: string; readonly callId: string }): string => `${taskId}/${callId}`;
