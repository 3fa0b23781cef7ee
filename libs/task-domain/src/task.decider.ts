// Over 300 lines on purpose: every command the task accepts and the rule that admits or refuses
// it, in one exhaustive switch. The state machine is read as a whole (a new command is checked
// against the others here); its helpers (approval rules, artifact diff) already live apart.
// The error types only: the @app/common index also re-exports modules that use Node (fs, crypto).
import { NotFoundError, ValidationError } from '@app/common/errors/app-error';
import { findMatchingRule, ruleFor } from './approvals/approval-rules';
import { diffArtifacts } from './artifacts/artifact-diff';
import { forkPrefix } from './fork/fork-point';
import type { CheckpointRef } from './checkpoints/checkpoint.types';
import type {
  ApprovalOutcome,
  ArtifactRecord,
  EgressRecord,
  McpServerUnavailable,
  SandboxExpired,
  SealedSecrets,
  SandboxSnapshotFailed,
  TaskCreated,
  TaskEvent,
  RecordedTokenUsage,
  ToolCallFinished,
  ToolCallRequested,
  ToolResultStatus,
} from './task.events';
import { addUsage } from './task.events';
import {
  CallNotAwaitingApprovalError,
  CallNotNextApprovedError,
  CallNotRunningError,
  MessageNotNextError,
  NoTurnWaitingError,
  SandboxAlreadyExpiredError,
  SandboxNotInSnapshotError,
  StaleModelResponseError,
  TaskAlreadyExistsError,
  TurnDecidedError,
  TurnNotRunningError,
  TurnRunningError,
} from './task.errors';
import type { ExistingTask, TaskState } from './task.state';
import { evolve, initialTaskState, isTurnActive, isTurnRunning, openCallsOf } from './task.state';

// ─── Commands ────────────────────────────────────────────────────────────────────────────────
// Pure business rules: decide(command, state) → events, or a typed error (task.errors.ts). Ids and the clock
// arrive in the command; nothing here does I/O.

export interface Command<Type extends string, Data> {
  readonly type: Type;
  readonly data: Data;
}

export interface RequestedToolCall {
  readonly callId: string;
  readonly toolName: string;
  readonly args: Readonly<Record<string, unknown>>;
}

export type CreateTask = Command<'CreateTask', TaskCreated['data']>;
/**
 * Starts a new task as a copy of another's events 1..`afterEventId` (docs/api.md
 * "POST /api/v1/tasks/{id}/fork"). The whole history comes with the command: the decider checks
 * the fork point and writes the new stream in one append.
 */
export type ForkTask = Command<
  'ForkTask',
  {
    /** The fork's id. */
    readonly taskId: string;
    readonly source: { readonly taskId: string; readonly events: readonly TaskEvent[] };
    readonly afterEventId: number;
    /** Absent: the source's, as it was at the fork point. */
    readonly autoExecute?: boolean;
    /** The source's secrets sealed again for the fork's id (the envelope is bound to its task); absent when it has none. */
    readonly sealedSecrets?: SealedSecrets;
    /** Starts a turn in a fork taken at rest, as a follow-up would. */
    readonly message?: { readonly messageId: string; readonly text: string };
  }
>;
export type AddUserMessage = Command<
  'AddUserMessage',
  {
    readonly messageId: string;
    readonly text: string;
    /** Sets the task's token budget from now on (raising it lets a task that reached it go on). */
    readonly maxTokens?: number;
    /** Sets the task's cost budget (USD) from now on, as maxTokens does for tokens. */
    readonly maxCostUsd?: number;
    /** `reject`: refused (TurnRunningError) while a turn runs, instead of queued. */
    readonly ifRunning?: 'reject';
  }
>;
/**
 * A follow-up sent with ifRunning `interrupt` or `rollback` (docs/api.md "Follow-ups"): turn
 * `turn` stops as a cancel stops it and the message's turn starts in the same append. What the
 * caller saw is part of the command, so that exactly one of concurrent changes wins: the
 * interrupt is refused when another turn runs by now, the turn was cancelled, or a call that was
 * awaiting approval (`awaiting`) has been decided since. A turn that ended by itself meanwhile
 * leaves nothing to interrupt: the message then starts the next turn, as any follow-up would.
 */
export type InterruptTurn = Command<
  'InterruptTurn',
  {
    readonly turn: number;
    readonly awaiting: readonly string[];
    readonly messageId: string;
    readonly text: string;
    readonly maxTokens?: number;
    readonly maxCostUsd?: number;
    /** Undo the turn too: its first event (TurnStarted), the workspace's checkpoint in effect then (absent: empty) and the artifacts then. */
    readonly rollback?: {
      readonly fromEventId: number;
      readonly checkpoint?: CheckpointRef;
      readonly artifacts: readonly ArtifactRecord[];
    };
  }
>;
/**
 * Starts the turn of the oldest waiting message. `messageId`: the message the agent loop admitted
 * (MAX_RUNNING_TASKS_PER_TENANT); when another one waits first by now, the command conflicts.
 */
export type StartTurn = Command<'StartTurn', { readonly messageId?: string }>;
/** Lets a fork's turn that was running at its fork point go on, once the agent loop admitted it (TaskForked `resumes`). */
export type ResumeTurn = Command<'ResumeTurn', { readonly messageId: string }>;
export type RecordModelResponse = Command<
  'RecordModelResponse',
  {
    readonly turn: number;
    readonly step: number;
    readonly text: string;
    readonly toolCalls: readonly RequestedToolCall[];
    readonly usage: RecordedTokenUsage;
    readonly model: string;
    readonly finishReason: string;
  }
>;
export type DecideToolCall = Command<'DecideToolCall', { readonly callId: string; readonly outcome: ApprovalOutcome }>;
/** Sent by the agent loop once a call has waited APPROVAL_TIMEOUT_MS; the decider only checks it still waits. */
export type ExpireApproval = Command<'ExpireApproval', { readonly callId: string; readonly timeoutMs: number }>;
export type StartToolCall = Command<'StartToolCall', { readonly callId: string }>;
export type FinishToolCall = Command<
  'FinishToolCall',
  {
    readonly callId: string;
    readonly status: ToolResultStatus;
    readonly output: string;
    readonly exitCode?: number;
    readonly durationMs: number;
    /** Every file under `downloads/` after the call (absent: not scanned); changes become artifact events. */
    readonly artifacts?: readonly ArtifactRecord[];
    /** Symlinks under downloads/ leading out of the workspace, when the call's scan ran. */
    readonly escapingLinks?: readonly string[];
    /** The connections its command made through the egress proxy, in the order they ended; each becomes an EgressRecorded. */
    readonly egress?: readonly EgressRecord[];
  } & Pick<ToolCallFinished['data'], 'changes' | 'changesTruncated' | 'checkpoint' | 'checkpointSkipped'>
>;
export type RecordSandboxExpired = Command<'RecordSandboxExpired', SandboxExpired['data']>;
export type RecordSandboxRestored = Command<'RecordSandboxRestored', { readonly snapshotKey: string; readonly durationMs: number }>;
export type RecordSandboxSnapshotFailed = Command<'RecordSandboxSnapshotFailed', SandboxSnapshotFailed['data']>;
/** A process cannot open the task's secrets: the turn fails rather than run anything without them. */
export type ReportSecretsUnavailable = Command<'ReportSecretsUnavailable', { readonly turn: number; readonly reason: string }>;
export type ReportMcpServerUnavailable = Command<'ReportMcpServerUnavailable', McpServerUnavailable['data']>;
export type FailTurn = Command<'FailTurn', { readonly turn: number; readonly error: string }>;
export type CancelTask = Command<'CancelTask', Record<string, never>>;

export type TaskCommand =
  | CreateTask
  | ForkTask
  | AddUserMessage
  | InterruptTurn
  | StartTurn
  | ResumeTurn
  | RecordModelResponse
  | DecideToolCall
  | ExpireApproval
  | StartToolCall
  | FinishToolCall
  | FailTurn
  | CancelTask
  | RecordSandboxExpired
  | RecordSandboxRestored
  | RecordSandboxSnapshotFailed
  | ReportSecretsUnavailable
  | ReportMcpServerUnavailable;

export const DECLINED_OUTPUT = 'The user declined this tool call; it did not run.';
export const expiredOutput = (timeoutMs: number): string =>
  `Nobody approved or declined this tool call within ${timeoutMs} ms (APPROVAL_TIMEOUT_MS), so it was treated as declined; it did not run.`;

// ─── Decide ──────────────────────────────────────────────────────────────────────────────────

/** Rules that come from the deployment, not from the task. */
export interface DecidePolicy {
  /**
   * MAX_RUNNING_TASKS_PER_TENANT is set: no turn starts by itself (a follow-up to a finished
   * task, the next queued message when a turn ends); the task waits `pending` until the agent
   * loop admits it with StartTurn. Unset, those turns start in the same append.
   */
  readonly turnsWaitForAdmission: boolean;
}

export const TURNS_START_AT_ONCE: DecidePolicy = { turnsWaitForAdmission: false };

/**
 * `revision`: the stream revision `state` was folded to (the id of its last event); the events
 * decided get the ids after it. Only an interrupt that rolls back names ids of its own.
 */
export function decide(command: TaskCommand, state: TaskState, policy: DecidePolicy = TURNS_START_AT_ONCE, revision = 0): TaskEvent[] {
  if (command.type === 'CreateTask') {
    if (state.exists) throw new TaskAlreadyExistsError(command.data.taskId);
    if (command.data.text.trim() === '') throw new ValidationError('message must be a non-empty string');
    if (command.data.maxTokens !== undefined) assertTokenBudget(command.data.maxTokens);
    if (command.data.maxCostUsd !== undefined) assertCostBudget(command.data.maxCostUsd);
    return [{ type: 'TaskCreated', data: command.data }];
  }
  if (command.type === 'ForkTask') {
    if (state.exists) throw new TaskAlreadyExistsError(command.data.taskId);
    return forkTask(command.data, policy);
  }
  if (!state.exists) throw new NotFoundError('task');
  const s = state;
  switch (command.type) {
    case 'AddUserMessage': {
      const { ifRunning, ...message } = command.data;
      if (ifRunning === 'reject' && isTurnRunning(s.status)) throw new TurnRunningError(s.turn);
      return addUserMessage(message, s, policy);
    }
    case 'InterruptTurn':
      return interruptTurn(command.data, s, policy, revision);
    case 'StartTurn':
      // A fork's suspended turn goes on (ResumeTurn) before any message queued behind it starts one.
      if (s.status !== 'pending' || s.queued.length === 0 || s.resuming) throw new NoTurnWaitingError();
      if (command.data.messageId !== undefined && command.data.messageId !== s.queued[0].messageId) {
        throw new MessageNotNextError(command.data.messageId);
      }
      return [{ type: 'TurnStarted', data: { turn: s.turn + 1, messageId: s.queued[0].messageId } }];
    case 'ResumeTurn':
      if (s.status !== 'pending' || !s.resuming) throw new NoTurnWaitingError();
      if (command.data.messageId !== s.resuming.messageId) throw new MessageNotNextError(command.data.messageId);
      return [{ type: 'TurnResumed', data: s.resuming }];
    case 'RecordModelResponse':
      return recordModelResponse(command.data, s, policy);
    case 'DecideToolCall':
      return decideToolCall(command.data, s);
    case 'ExpireApproval':
      return expireApproval(command.data, s);
    case 'StartToolCall': {
      const next = openCallsOf(s).find((c) => c.phase !== 'finished');
      if (!isTurnRunning(s.status) || next?.callId !== command.data.callId || next.phase !== 'approved') {
        throw new CallNotNextApprovedError(command.data.callId);
      }
      return [{ type: 'ToolCallStarted', data: { callId: next.callId, toolName: next.toolName } }];
    }
    case 'FinishToolCall': {
      const call = openCallsOf(s).find((c) => c.callId === command.data.callId);
      if (!isTurnRunning(s.status) || call?.phase !== 'running') {
        throw new CallNotRunningError(command.data.callId);
      }
      const { artifacts, escapingLinks, egress, ...result } = command.data;
      // What the command did on the network comes before its result, as it happened before it ended.
      const connections = (egress ?? []).map((record): TaskEvent => ({
        type: 'EgressRecorded',
        data: { callId: result.callId, ...record },
      }));
      const finished: TaskEvent = { type: 'ToolCallFinished', data: { ...result, toolName: call.toolName } };
      const links =
        escapingLinks && !sameItems(escapingLinks, s.escapingLinks)
          ? [{ type: 'ArtifactLinksChanged' as const, data: { callId: result.callId, links: [...escapingLinks].sort() } }]
          : [];
      return [...connections, finished, ...(artifacts ? diffArtifacts(s.artifacts, artifacts, result.callId) : []), ...links];
    }
    case 'FailTurn':
      if (!isTurnRunning(s.status) || command.data.turn !== s.turn) throw new TurnNotRunningError(command.data.turn);
      return endTurn(s, { type: 'TaskFailed', data: { turn: s.turn, error: command.data.error, usage: s.turnUsage } }, policy);
    case 'CancelTask':
      return cancelTask(s);
    case 'RecordSandboxExpired':
      if (s.expiredSnapshotKey !== undefined) throw new SandboxAlreadyExpiredError();
      return [{ type: 'SandboxExpired', data: command.data }];
    case 'RecordSandboxRestored':
      if (s.expiredSnapshotKey !== command.data.snapshotKey) throw new SandboxNotInSnapshotError(command.data.snapshotKey);
      return [{ type: 'SandboxRestored', data: command.data }];
    case 'RecordSandboxSnapshotFailed':
      // An expired sandbox is archived already: a failure to archive it again would be stale.
      if (s.expiredSnapshotKey !== undefined) throw new SandboxAlreadyExpiredError();
      return [{ type: 'SandboxSnapshotFailed', data: command.data }];
    case 'ReportSecretsUnavailable':
      return reportSecretsUnavailable(command.data, s, policy);
    case 'ReportMcpServerUnavailable':
      // Said once per server and reason: every turn (every tool listing) would say it again.
      if (s.mcpUnavailable[command.data.server] === command.data.reason) return [];
      return [{ type: 'McpServerUnavailable', data: command.data }];
    default: {
      const _exhaustive: never = command;
      return _exhaustive;
    }
  }
}

/**
 * The source's events up to the fork point with the same kinds and data, except that the fork's
 * TaskCreated names the fork (every reader then sees the fork as itself) and carries its own
 * envelope; then TaskForked, and the follow-up that starts a turn when one was given.
 */
function forkTask(data: ForkTask['data'], policy: DecidePolicy): TaskEvent[] {
  const [created, ...rest] = forkPrefix(data.source.events, data.afterEventId, data.message !== undefined);
  if (created.type !== 'TaskCreated') throw new Error(`task ${data.source.taskId} does not begin with TaskCreated`);
  // A fork is the caller's, not the schedule's that started the source.
  const { sealedSecrets: _boundToSource, scheduleId: _notTheForks, ...createdData } = created.data;
  const copy: TaskEvent = {
    type: 'TaskCreated',
    data: { ...createdData, taskId: data.taskId, ...(data.sealedSecrets ? { sealedSecrets: data.sealedSecrets } : {}) },
  };
  const copied = [copy, ...rest];
  const atForkPoint = copied.reduce(evolve, initialTaskState()) as ExistingTask;
  // A turn running at the fork point is a turn the fork runs: where turns wait for admission, it waits too.
  const running = isTurnRunning(atForkPoint.status) && policy.turnsWaitForAdmission ? runningTurnOf(copied) : undefined;
  const forked: TaskEvent = {
    type: 'TaskForked',
    data: {
      taskId: data.source.taskId,
      eventId: data.afterEventId,
      autoExecute: data.autoExecute ?? atForkPoint.autoExecute,
      ...(running ? { resumes: running } : {}),
    },
  };
  const events = [...copied, forked];
  if (!data.message) return events;
  return [...events, ...addUserMessage(data.message, evolve(atForkPoint, forked) as ExistingTask, policy)];
}

/** The turn and message of the last TurnStarted: the turn running at the end of `events`. */
function runningTurnOf(events: readonly TaskEvent[]): { turn: number; messageId: string } | undefined {
  for (let i = events.length - 1; i >= 0; i--) {
    const event = events[i];
    if (event.type === 'TurnStarted') return { turn: event.data.turn, messageId: event.data.messageId };
  }
  return undefined;
}

function addUserMessage(data: Omit<AddUserMessage['data'], 'ifRunning'>, s: ExistingTask, policy: DecidePolicy): TaskEvent[] {
  if (data.text.trim() === '') throw new ValidationError('message must be a non-empty string');
  if (data.maxTokens !== undefined) assertTokenBudget(data.maxTokens);
  if (data.maxCostUsd !== undefined) assertCostBudget(data.maxCostUsd);
  // `queued`: the message does not start its turn at once.
  if (isTurnActive(s.status) || policy.turnsWaitForAdmission) return [{ type: 'UserMessageAdded', data: { ...data, queued: true } }];
  return [
    { type: 'UserMessageAdded', data: { ...data, queued: false } },
    { type: 'TurnStarted', data: { turn: s.turn + 1, messageId: data.messageId } },
  ];
}

function recordModelResponse(data: RecordModelResponse['data'], s: ExistingTask, policy: DecidePolicy): TaskEvent[] {
  const unfinished = openCallsOf(s).some((c) => c.phase !== 'finished');
  if (!isTurnRunning(s.status) || data.turn !== s.turn || data.step !== s.step + 1 || unfinished) {
    throw new StaleModelResponseError(data.turn, data.step);
  }
  const { turn, step } = data;
  const events: TaskEvent[] = [
    { type: 'ModelResponded', data: { turn, step, model: data.model, finishReason: data.finishReason, usage: data.usage } },
  ];
  if (data.text !== '') events.push({ type: 'AssistantTextProduced', data: { turn, step, text: data.text } });
  for (const call of data.toolCalls) events.push(requestToolCall(call, turn, step, s));
  if (data.toolCalls.length > 0) return events;
  return [...events, ...endTurn(s, { type: 'TurnCompleted', data: { turn, usage: addUsage(s.turnUsage, data.usage) } }, policy)];
}

function requestToolCall(call: RequestedToolCall, turn: number, step: number, s: ExistingTask): ToolCallRequested {
  const base = { turn, step, callId: call.callId, toolName: call.toolName, args: call.args };
  if (s.autoExecute) return { type: 'ToolCallRequested', data: { ...base, status: 'approved' } };
  const rule = findMatchingRule(s.rules, call.toolName, call.args);
  if (rule) return { type: 'ToolCallRequested', data: { ...base, status: 'approved', approvedByRule: rule } };
  return { type: 'ToolCallRequested', data: { ...base, status: 'awaiting_approval' } };
}

function decideToolCall(data: DecideToolCall['data'], s: ExistingTask): TaskEvent[] {
  const call = s.calls.find((c) => c.callId === data.callId);
  if (!call) throw new NotFoundError('tool call');
  if (call.phase !== 'awaiting_approval' || !openCallsOf(s).includes(call) || !isTurnRunning(s.status)) {
    throw new CallNotAwaitingApprovalError(data.callId);
  }
  if (data.outcome === 'cancel') {
    return [
      { type: 'ToolCallDecided', data: { callId: call.callId, outcome: 'cancel', approved: false } },
      {
        type: 'ToolCallFinished',
        data: { callId: call.callId, toolName: call.toolName, status: 'cancelled', output: DECLINED_OUTPUT, durationMs: 0 },
      },
    ];
  }
  const rule = data.outcome === 'proceed_always' ? ruleFor(call.toolName, call.args) : undefined;
  return [{ type: 'ToolCallDecided', data: { callId: call.callId, outcome: data.outcome, approved: true, ...(rule ? { rule } : {}) } }];
}

function expireApproval(data: ExpireApproval['data'], s: ExistingTask): TaskEvent[] {
  const call = openCallsOf(s).find((c) => c.callId === data.callId);
  if (!call || call.phase !== 'awaiting_approval' || !isTurnRunning(s.status)) {
    throw new CallNotAwaitingApprovalError(data.callId);
  }
  return [
    { type: 'ToolCallApprovalExpired', data: { callId: call.callId, toolName: call.toolName, timeoutMs: data.timeoutMs } },
    {
      type: 'ToolCallFinished',
      data: { callId: call.callId, toolName: call.toolName, status: 'cancelled', output: expiredOutput(data.timeoutMs), durationMs: 0 },
    },
  ];
}

/** Closes the turn's unfinished calls (none of them may run), says why, and fails the turn. */
function reportSecretsUnavailable(data: ReportSecretsUnavailable['data'], s: ExistingTask, policy: DecidePolicy): TaskEvent[] {
  if (s.secretNames.length === 0) return [];
  if (!isTurnRunning(s.status) || data.turn !== s.turn) throw new TurnNotRunningError(data.turn);
  const closing: TaskEvent[] = openCallsOf(s)
    .filter((c) => c.phase !== 'finished')
    .map((c) => ({
      type: 'ToolCallFinished',
      data: { callId: c.callId, toolName: c.toolName, status: 'error', output: data.reason, durationMs: 0 },
    }));
  return [
    ...closing,
    { type: 'SecretsUnavailable', data: { names: s.secretNames, reason: data.reason } },
    ...endTurn(s, { type: 'TaskFailed', data: { turn: s.turn, error: data.reason, usage: s.turnUsage } }, policy),
  ];
}

function interruptTurn(data: InterruptTurn['data'], s: ExistingTask, policy: DecidePolicy, revision: number): TaskEvent[] {
  const { turn, awaiting, rollback, ...message } = data;
  if (message.text.trim() === '') throw new ValidationError('message must be a non-empty string');
  if (s.turn !== turn) throw new TurnDecidedError(turn, `turn ${s.turn} has started since`);
  if (!isTurnRunning(s.status)) {
    if (s.status === 'cancelled') throw new TurnDecidedError(turn, 'it was cancelled');
    // It ended by itself: nothing to stop, so the message is an ordinary follow-up.
    return addUserMessage(message, s, policy);
  }
  const open = openCallsOf(s);
  const decided = awaiting.find((callId) => open.find((c) => c.callId === callId)?.phase !== 'awaiting_approval');
  if (decided !== undefined) throw new TurnDecidedError(turn, `tool call ${decided} was decided since`);
  const closing: TaskEvent[] = open
    .filter((c) => c.phase !== 'finished')
    .map((c) => ({
      type: 'ToolCallFinished',
      data: { callId: c.callId, toolName: c.toolName, status: 'cancelled', output: 'The turn was interrupted.', durationMs: 0 },
    }));
  const cancelled: TaskEvent = { type: 'TaskCancelled', data: { turn, droppedMessageIds: [], usage: s.turnUsage, reason: 'interrupted' } };
  const undone: TaskEvent[] = rollback
    ? [
        {
          type: 'TurnRolledBack',
          data: {
            turn,
            fromEventId: rollback.fromEventId,
            toEventId: revision + closing.length + 1,
            ...(rollback.checkpoint ? { checkpoint: rollback.checkpoint } : {}),
            artifacts: rollback.artifacts,
          },
        },
      ]
    : [];
  if (message.maxTokens !== undefined) assertTokenBudget(message.maxTokens);
  if (message.maxCostUsd !== undefined) assertCostBudget(message.maxCostUsd);
  // The interrupted turn's place (its running slot, MAX_RUNNING_TASKS_PER_TENANT) passes to this one: it starts at once.
  return [
    ...closing,
    cancelled,
    ...undone,
    { type: 'UserMessageAdded', data: { ...message, queued: false } },
    { type: 'TurnStarted', data: { turn: s.turn + 1, messageId: message.messageId } },
  ];
}

function cancelTask(s: ExistingTask): TaskEvent[] {
  if (!isTurnActive(s.status)) return [];
  const closing: TaskEvent[] = openCallsOf(s)
    .filter((c) => c.phase !== 'finished')
    .map((c) => ({
      type: 'ToolCallFinished',
      data: { callId: c.callId, toolName: c.toolName, status: 'cancelled', output: 'The task was cancelled.', durationMs: 0 },
    }));
  // A fork's turn waiting to resume holds a place in its tenant's line by its message: dropped too.
  const dropped = [...(s.resuming ? [s.resuming.messageId] : []), ...s.queued.map((m) => m.messageId)];
  return [...closing, { type: 'TaskCancelled', data: { turn: s.turn, droppedMessageIds: dropped, usage: s.turnUsage } }];
}

function assertTokenBudget(maxTokens: number): void {
  if (!Number.isSafeInteger(maxTokens) || maxTokens < 1) throw new ValidationError('maxTokens must be a whole number of at least 1');
}

function assertCostBudget(maxCostUsd: number): void {
  if (!Number.isFinite(maxCostUsd) || maxCostUsd <= 0) throw new ValidationError('maxCostUsd must be a positive number of USD');
}

/** Ends the current turn and, when follow-ups are queued, starts the next one in the same append (unless it must wait for admission). */
function endTurn(s: ExistingTask, end: TaskEvent, policy: DecidePolicy): TaskEvent[] {
  const next = s.queued[0];
  if (!next || policy.turnsWaitForAdmission) return [end];
  return [end, { type: 'TurnStarted', data: { turn: s.turn + 1, messageId: next.messageId } }];
}

function sameItems(a: readonly string[], b: readonly string[]): boolean {
  const [x, y] = [[...a].sort(), [...b].sort()];
  return x.length === y.length && x.every((item, i) => item === y[i]);
}
