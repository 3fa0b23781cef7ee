import { Logger } from '@nestjs/common';
import type { TaskSecrets } from '@app/common';
import { SecretsUnavailableError, annotateLogContext, newId } from '@app/common';
import type { ExecuteToolReply, ExecuteToolRequest, ListToolsRequest, ToolCancelledNotice } from '@app/contracts';
import { SUBJECTS } from '@app/contracts';
import type { StoredEvent } from '@app/event-store';
import { ExpectedRevisionConflictError } from '@app/event-store';
import type { MessageBus } from '@app/bus';
import { DEFAULT_REQUEST_TIMEOUT_MS, RemoteError, requestUntilDelivered } from '@app/bus';
import type { ModelProvider, TokenUsage, ToolDefinition } from '@app/model-provider';
import { costOfCall, priceOf } from '@app/model-provider';
import type { StepOutcome } from '@app/runner';
import { GEN_AI, executeToolAttributes, executeToolSpanName, inSpan } from '@app/tracing';
import type { TaskCommand, TaskEvent } from '@app/task-domain';
import { TaskConflictError, toTaskEvent } from '@app/task-domain';
import type { TaskCommandExecutor } from '@app/task-commands';
import type { AgentLoopConfig } from './agent-loop.config';
import { buildConversation } from './conversation';
import type { NextAction } from './next-action';
import { INTERRUPTED_OUTPUT, nextAction } from './next-action';
import type { SandboxHolderWatch } from './sandbox-holder-watch';
import type { TurnAdmission } from './turn-admission';
import { turnOf } from './turn-of';

/**
 * One step of a task's agent loop: read the task, do the single next thing (start the turn, call
 * the model, run one tool) and record it as events. Every step re-reads the stream, so a crash
 * between steps loses nothing, and a crash inside one is detected by the next.
 */
export class AgentStep {
  /**
   * Calls this process is running, by task: a fork copies its source's calls with their ids (and
   * runs again those unfinished at its fork point), so a call id alone does not name one call.
   */
  private readonly inFlight = new Map<string, Set<string>>();
  private readonly logger = new Logger('AgentStep');

  constructor(
    private readonly commands: TaskCommandExecutor,
    private readonly model: ModelProvider,
    private readonly bus: MessageBus,
    private readonly secrets: TaskSecrets,
    private readonly config: AgentLoopConfig,
    /** MAX_RUNNING_TASKS_PER_TENANT is set: turns start only when admitted. */
    private readonly admission?: TurnAdmission,
    /** The distributed mode: a call whose sandbox instance dies ends when its lease says so. */
    private readonly holders?: { readonly watch: SandboxHolderWatch; readonly onLost: () => void },
  ) {}

  private get vault() {
    return this.secrets.vault;
  }

  readonly run = async (taskId: string, signal: AbortSignal, turn?: number): Promise<StepOutcome> => {
    const { state, events } = await this.commands.load(taskId);
    // A loop of an earlier turn (a per-turn runner) leaves the task to the loop of the turn it is on.
    if (turn !== undefined && turnOf(state) !== turn) return 'idle';
    if (state.exists) annotateLogContext({ turn: turnOf(state) });
    const action = nextAction(state, this.inFlight.get(taskId) ?? new Set());
    if (action.kind !== 'idle') this.logger.debug(`next: ${describeAction(action)}`);
    if ((action.kind === 'call_model' || action.kind === 'execute_tool') && state.exists) {
      // Model text is redacted with the values and commands need them: opened from the task's
      // envelope (once per process), or else the turn fails rather than go on without them.
      try {
        this.secrets.open(taskId, state);
      } catch (error) {
        if (!(error instanceof SecretsUnavailableError)) throw error;
        return this.record(taskId, { type: 'ReportSecretsUnavailable', data: { turn: state.turn, reason: error.message } });
      }
    }
    switch (action.kind) {
      case 'idle':
        return 'idle';
      case 'await_approval':
        return this.awaitApproval(taskId, action.callId, events);
      case 'tool_in_flight':
        return 'wait';
      case 'start_turn': {
        if (!state.exists) return 'idle';
        const { messageId } = state.queued[0];
        // Not admitted: the task stays pending; the end of one of its tenant's turns wakes it again.
        if (this.admission && !(await this.admission.mayStart(state.tenantId, taskId, messageId))) return 'idle';
        return this.record(taskId, { type: 'StartTurn', data: { messageId } });
      }
      case 'resume_turn': {
        if (!state.exists) return 'idle';
        if (this.admission && !(await this.admission.mayStart(state.tenantId, taskId, action.messageId))) return 'idle';
        return this.record(taskId, { type: 'ResumeTurn', data: { messageId: action.messageId } });
      }
      case 'interrupt_tool':
        return this.record(taskId, {
          type: 'FinishToolCall',
          data: { callId: action.callId, status: 'error', output: INTERRUPTED_OUTPUT, durationMs: 0 },
        });
      case 'call_model':
        if (action.step > this.config.maxStepsPerTurn) {
          const error = `Step limit reached: the agent made ${this.config.maxStepsPerTurn} model calls in this turn (MAX_STEPS_PER_TURN). Send a follow-up to continue.`;
          return this.record(taskId, { type: 'FailTurn', data: { turn: action.turn, error } });
        }
        return this.callModel(taskId, action.turn, action.step, events.map(toTaskEvent), signal);
      case 'budget_reached':
        return this.record(taskId, { type: 'FailTurn', data: { turn: action.turn, error: action.error } });
      case 'execute_tool': {
        const call = state.exists ? state.calls.find((c) => c.callId === action.callId) : undefined;
        if (!call) return 'idle';
        return this.executeTool(taskId, call.turn, call.callId, call.toolName, { ...call.args }, signal);
      }
      default: {
        const _exhaustive: never = action;
        return _exhaustive;
      }
    }
  };

  private async callModel(taskId: string, turn: number, step: number, history: TaskEvent[], signal: AbortSignal): Promise<StepOutcome> {
    let response;
    try {
      // Like a tool call, waits out a NATS reconnect or sandbox restarts instead of failing the turn.
      const tools = await requestUntilDelivered<ListToolsRequest, ToolDefinition[]>(
        this.bus,
        SUBJECTS.sandboxListTools,
        { taskId },
        {
          timeoutMs: DEFAULT_REQUEST_TIMEOUT_MS,
          signal,
        },
      );
      response = await this.model.complete({ messages: buildConversation(history), tools, signal });
    } catch (error) {
      if (signal.aborted) return 'continue';
      const unavailable = sandboxSecretsUnavailable(error);
      if (unavailable) return this.record(taskId, { type: 'ReportSecretsUnavailable', data: { turn, reason: unavailable } });
      const message = this.vault.redact(taskId, error instanceof Error ? error.message : String(error));
      return this.record(taskId, { type: 'FailTurn', data: { turn, error: message } });
    }
    const toolCalls = response.toolCalls.map((c) => ({
      callId: newId('call'),
      toolName: c.name,
      args: this.vault.redactDeep(taskId, c.arguments),
    }));
    return this.record(taskId, {
      type: 'RecordModelResponse',
      data: {
        turn,
        step,
        text: this.vault.redact(taskId, response.text),
        toolCalls,
        usage: { ...response.usage, costUsd: this.costOf(response.model, response.usage) },
        model: response.model,
        finishReason: response.finishReason,
      },
    });
  }

  /** At the price of the model that answered (the configured one when the answer names none); null: no price. */
  private costOf(answeredBy: string, usage: TokenUsage): number | null {
    const model = answeredBy || this.config.configuredModel;
    const price = model ? priceOf(this.config.modelPrices, model) : undefined;
    return price ? costOfCall(price, usage) : null;
  }

  /** Waits for a decision until APPROVAL_TIMEOUT_MS after the request, counted from its recorded time (so restarts do not reset it). */
  private async awaitApproval(taskId: string, callId: string, events: readonly StoredEvent[]): Promise<StepOutcome> {
    const requested = events.find((e) => {
      const event = toTaskEvent(e);
      return event.type === 'ToolCallRequested' && event.data.callId === callId;
    });
    const deadline = (requested ? Date.parse(requested.recordedAt) : Date.now()) + this.config.approvalTimeoutMs;
    if (Date.now() < deadline) return { waitUntil: deadline };
    return this.record(taskId, { type: 'ExpireApproval', data: { callId, timeoutMs: this.config.approvalTimeoutMs } });
  }

  private async executeTool(
    taskId: string,
    turn: number,
    callId: string,
    toolName: string,
    args: Record<string, unknown>,
    signal: AbortSignal,
  ): Promise<StepOutcome> {
    // Record the start first: if we crash while the tool runs, the next step sees a started,
    // unfinished call and reports it as interrupted instead of running it twice.
    const started = await this.record(taskId, { type: 'StartToolCall', data: { callId } });
    if (started !== 'continue') return started;
    const name = this.vault.redact(taskId, toolName);
    const { reply, secretsUnavailable } = await inSpan(
      executeToolSpanName(name),
      { attributes: executeToolAttributes(name, callId) },
      async (span) => {
        if (this.config.captureGenAiContent) {
          span.setAttribute(GEN_AI.toolCallArguments, JSON.stringify(this.vault.redactDeep(taskId, args)));
        }
        const ran = await this.runToolCall(taskId, callId, toolName, args, signal);
        if (ran.reply.status === 'error') span.setAttribute(GEN_AI.errorType, TOOL_ERROR);
        if (this.config.captureGenAiContent) span.setAttribute(GEN_AI.toolCallResult, this.vault.redact(taskId, ran.reply.output));
        return ran;
      },
    );
    if (signal.aborted) return 'continue';
    // The sandbox instance could not open the secrets, so it ran nothing: the call and the turn end.
    if (secretsUnavailable) return this.record(taskId, { type: 'ReportSecretsUnavailable', data: { turn, reason: secretsUnavailable } });
    return this.record(taskId, {
      type: 'FinishToolCall',
      data: {
        callId,
        status: reply.status,
        output: this.vault.redact(taskId, reply.output),
        ...(reply.exitCode === undefined ? {} : { exitCode: reply.exitCode }),
        durationMs: reply.durationMs,
        ...(reply.artifacts ? { artifacts: reply.artifacts } : {}),
        ...(reply.escapingLinks ? { escapingLinks: reply.escapingLinks } : {}),
        ...(reply.egress?.length ? { egress: reply.egress.map((r) => ({ ...r, host: this.vault.redact(taskId, r.host) })) } : {}),
        ...(reply.changes?.length ? { changes: reply.changes.map((c) => ({ ...c, path: this.vault.redact(taskId, c.path) })) } : {}),
        ...(reply.changesTruncated ? { changesTruncated: true as const } : {}),
        ...(reply.checkpoint ? { checkpoint: reply.checkpoint } : {}),
        ...(reply.checkpointSkipped ? { checkpointSkipped: this.vault.redact(taskId, reply.checkpointSkipped) } : {}),
      },
    });
  }

  /** Has the sandbox run the call; the reply, or the error the call ends with, and whether the sandbox lacked the secrets. */
  private async runToolCall(
    taskId: string,
    callId: string,
    toolName: string,
    args: Record<string, unknown>,
    signal: AbortSignal,
  ): Promise<{ reply: ExecuteToolReply; secretsUnavailable?: string }> {
    this.inFlight.set(taskId, (this.inFlight.get(taskId) ?? new Set()).add(callId));
    const startedAt = Date.now();
    // Cancel: tell whichever sandbox instance runs the call to kill it (the events already say cancelled).
    const onAbort = () => this.bus.publish<ToolCancelledNotice>(SUBJECTS.sandboxToolCancelled, { taskId, callId });
    signal.addEventListener('abort', onAbort, { once: true });
    let reply: ExecuteToolReply;
    let secretsUnavailable: string | undefined;
    const holder = this.holders?.watch.watch(taskId);
    try {
      // A NATS restart or every sandbox instance restarting delays the call instead of failing it.
      const request = requestUntilDelivered<ExecuteToolRequest, ExecuteToolReply>(
        this.bus,
        SUBJECTS.sandboxExecuteTool,
        { taskId, callId, toolName, args },
        { timeoutMs: this.config.toolTimeoutMs, signal },
      );
      // Once the holder is lost, or the turn cancelled or interrupted, the request's own late answer is no news.
      request.catch(() => undefined);
      // Aborted: the notice above kills the command; the step ends now rather than after the
      // sandbox's reply (the kill, the downloads/ scan, the checkpoint), so an interrupt's turn
      // starts at once. The sandbox runs the task's next call only after this one has stopped.
      const abort = untilAborted(signal);
      try {
        reply = await Promise.race([request, abort.promise, ...(holder ? [holder.lost.then(holderLost)] : [])]);
      } finally {
        abort.dispose();
      }
    } catch (error) {
      secretsUnavailable = sandboxSecretsUnavailable(error);
      if (error instanceof HolderLost) {
        this.holders!.onLost();
        // Should the instance only have been cut off, it stops the command itself; this says so too.
        onAbort();
      }
      const message = error instanceof Error ? error.message : String(error);
      reply = { status: 'error', output: `The tool could not be run: ${message}`, durationMs: Date.now() - startedAt };
    } finally {
      holder?.stop();
      signal.removeEventListener('abort', onAbort);
      const running = this.inFlight.get(taskId);
      running?.delete(callId);
      if (running?.size === 0) this.inFlight.delete(taskId);
    }
    return { reply, secretsUnavailable };
  }

  /** Appends; a conflict means someone else changed the task (cancel, decision): look again. */
  private async record(taskId: string, command: TaskCommand): Promise<StepOutcome> {
    try {
      await this.commands.execute(taskId, command, { retries: 5 });
      return 'continue';
    } catch (error) {
      if (error instanceof ExpectedRevisionConflictError || error instanceof TaskConflictError) return 'continue';
      throw error;
    }
  }
}

/** `error.type` of a call that ended in error: the tool's own failure, a timeout, a lost sandbox. */
const TOOL_ERROR = 'tool_error';

/** Rejects once `signal` aborts; dispose() drops the listener (the loop's signal outlives many calls). */
function untilAborted(signal: AbortSignal): { promise: Promise<never>; dispose: () => void } {
  let onAbort = () => undefined as void;
  const promise = new Promise<never>((_, reject) => {
    onAbort = () => reject(new Error('the step was aborted'));
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
  });
  return { promise, dispose: () => signal.removeEventListener('abort', onAbort) };
}

/** The call's sandbox instance was lost (SandboxHolderWatch): the call ends with this as its error. */
class HolderLost extends Error {}

function holderLost(why: string): never {
  throw new HolderLost(why);
}

/** The sandbox refused a request because it cannot open the task's secrets: why, or undefined. */
function sandboxSecretsUnavailable(error: unknown): string | undefined {
  if (!(error instanceof RemoteError) || error.remoteCode !== 'SECRETS.UNAVAILABLE') return undefined;
  return `In the sandbox service: ${error.message}`;
}

/** A step's action for the debug log: its kind and the ids it concerns, never arguments or text. */
function describeAction(action: NextAction): string {
  if ('callId' in action) return `${action.kind} ${action.callId}`;
  if (action.kind === 'call_model') return `${action.kind} (step ${action.step})`;
  return action.kind;
}
