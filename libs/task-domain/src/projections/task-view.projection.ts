import type { ArtifactRecord, TaskEvent, TaskNetwork, TokenUsage, UploadedFile } from '../task.events';
import { addUsage, ZERO_USAGE } from '../task.events';
import type { ForkOrigin, TaskStatus } from '../task.state';
import { mcpNotice } from './public-event.projection';

// The task as GET /tasks/{id} and the task list show it. Idempotent: an event whose revision the
// view has already seen is ignored, so replays and duplicate deliveries change nothing.

export interface PendingApproval {
  readonly callId: string;
  readonly toolName: string;
  readonly args: Readonly<Record<string, unknown>>;
  readonly requestedAt: string;
}

export interface TaskMessage {
  readonly id: string;
  readonly text: string;
  readonly createdAt: string;
  /** Stream revision (SSE id) of the event that carried the message. */
  readonly eventId: number;
}

export interface TaskView {
  readonly id: string;
  readonly tenantId: string;
  readonly status: TaskStatus;
  readonly createdAt: string;
  readonly updatedAt: string;
  readonly autoExecute: boolean;
  readonly showInHistory: boolean;
  readonly messages: readonly TaskMessage[];
  readonly pendingApprovals: readonly PendingApproval[];
  readonly error?: string;
  readonly usage: TokenUsage;
  /** The token budget in force (create field, TASK_MAX_TOKENS, or a follow-up's); absent: unlimited. */
  readonly maxTokens?: number;
  /** The cost budget in force (USD: create field, TASK_MAX_COST_USD, or a follow-up's); absent: unlimited. */
  readonly maxCostUsd?: number;
  /** Where the task's webhooks go, as its creator gave it; absent: nowhere, or WEBHOOK_URL (the operator's, never shown). */
  readonly webhookUrl?: string;
  /** The create field `network` as given; absent: SANDBOX_EGRESS_ALLOW applies. */
  readonly network?: TaskNetwork;
  readonly envKeys: readonly string[];
  readonly files: readonly UploadedFile[];
  /** Files under downloads/, by path order. */
  readonly artifacts: readonly ArtifactRecord[];
  /** Symlinks under downloads/ leading out of the workspace (internal: downloads through them are refused). */
  readonly escapingLinks: readonly string[];
  /** Names of the task's secrets (never their values). */
  readonly secretNames: readonly string[];
  /** Things the caller should know that are not errors, e.g. secrets lost in a restart. */
  readonly notices: readonly string[];
  /** `active`, or `expired` while the workspace waits in a snapshot. */
  readonly sandbox: 'active' | 'expired';
  /** Number of the latest turn (0 until the first starts). */
  readonly turn: number;
  /**
   * Revision of the first event of the latest turn: where the default SSE replay begins. While
   * the next turn waits (`pending`), the first event of that turn to be.
   */
  readonly turnStartEventId: number;
  /** Messages whose turn has not started yet, oldest first (internal). */
  readonly waitingMessageIds: readonly string[];
  /** Revision of the last event applied: the id of the task's latest SSE event. */
  readonly lastEventId: number;
  /** Set on a fork: the task and event (public id) it was taken after. */
  readonly forkedFrom?: ForkOrigin;
  /** Set on a task a schedule started. */
  readonly scheduleId?: string;
}

export interface ProjectedEvent {
  readonly event: TaskEvent;
  readonly revision: number;
  readonly recordedAt: string;
}

const ACTIVE: readonly TaskStatus[] = ['pending', 'running', 'awaiting_approval'];
const RUNNING: readonly TaskStatus[] = ['running', 'awaiting_approval'];

const withoutApproval = (v: TaskView, callId: string) => v.pendingApprovals.filter((p) => p.callId !== callId);

/** Status while a turn runs: waiting when any call of it waits for a decision. */
const activeStatus = (pending: readonly PendingApproval[]): TaskStatus => (pending.length > 0 ? 'awaiting_approval' : 'running');

/**
 * A turn ended: the task is done, or, when messages wait for the next turn (one that waits for
 * admission, MAX_RUNNING_TASKS_PER_TENANT), pending, and the next turn's replay begins after this.
 */
function endTurn(v: TaskView, ended: TaskStatus, revision: number): TaskView {
  if (v.waitingMessageIds.length === 0) return { ...v, status: ended, pendingApprovals: [] };
  return { ...v, status: 'pending', turnStartEventId: revision + 1, pendingApprovals: [] };
}

export function projectTaskView(view: TaskView | undefined, { event, revision, recordedAt }: ProjectedEvent): TaskView | undefined {
  if (event.type === 'TaskCreated') {
    if (view) return view;
    const d = event.data;
    return {
      id: d.taskId,
      tenantId: d.tenantId,
      status: 'pending',
      createdAt: recordedAt,
      updatedAt: recordedAt,
      autoExecute: d.autoExecute,
      showInHistory: d.showInHistory,
      messages: [{ id: d.messageId, text: d.text, createdAt: recordedAt, eventId: revision }],
      pendingApprovals: [],
      usage: ZERO_USAGE,
      ...(d.maxTokens !== undefined ? { maxTokens: d.maxTokens } : {}),
      ...(d.maxCostUsd !== undefined ? { maxCostUsd: d.maxCostUsd } : {}),
      // The operator's default URL stays out of the view, which is the tenant's.
      ...(d.webhookUrl !== undefined && d.webhookUrlIsDefault !== true ? { webhookUrl: d.webhookUrl } : {}),
      ...(d.network !== undefined ? { network: d.network } : {}),
      ...(d.scheduleId !== undefined ? { scheduleId: d.scheduleId } : {}),
      envKeys: Object.keys(d.env),
      files: d.files,
      artifacts: [],
      escapingLinks: [],
      secretNames: d.secretNames,
      notices: [],
      sandbox: 'active',
      turn: 0,
      turnStartEventId: revision,
      waitingMessageIds: [d.messageId],
      lastEventId: revision,
    };
  }
  if (!view || revision <= view.lastEventId) return view;
  const v: TaskView = { ...view, updatedAt: recordedAt, lastEventId: revision };
  switch (event.type) {
    case 'UserMessageAdded': {
      const messages = [...v.messages, { id: event.data.messageId, text: event.data.text, createdAt: recordedAt, eventId: revision }];
      const waitingMessageIds = [...v.waitingMessageIds, event.data.messageId];
      // Sent to a finished task, the message begins the next turn (and its replay).
      const next = ACTIVE.includes(v.status)
        ? { ...v, messages, waitingMessageIds }
        : { ...v, messages, waitingMessageIds, status: 'pending' as const, turnStartEventId: revision };
      const { maxTokens, maxCostUsd } = event.data;
      return { ...next, ...(maxTokens !== undefined ? { maxTokens } : {}), ...(maxCostUsd !== undefined ? { maxCostUsd } : {}) };
    }
    case 'TurnStarted': {
      // The replay of a turn begins where the pending task's did: its first message, a follow-up
      // that found the task idle, or, for one queued behind a running turn, the turn's end.
      const { error: _previous, ...rest } = v;
      const waitingMessageIds = v.waitingMessageIds.filter((id) => id !== event.data.messageId);
      return { ...rest, status: 'running', turn: event.data.turn, waitingMessageIds, pendingApprovals: [] };
    }
    case 'ModelResponded': {
      return { ...v, usage: addUsage(v.usage, event.data.usage) };
    }
    case 'ToolCallRequested': {
      if (event.data.status !== 'awaiting_approval') return v;
      const d = event.data;
      const pendingApprovals = [...v.pendingApprovals, { callId: d.callId, toolName: d.toolName, args: d.args, requestedAt: recordedAt }];
      return { ...v, pendingApprovals, status: activeStatus(pendingApprovals) };
    }
    case 'ToolCallDecided':
    case 'ToolCallApprovalExpired':
    case 'ToolCallFinished': {
      if (!RUNNING.includes(v.status)) return v;
      const pendingApprovals = withoutApproval(v, event.data.callId);
      return { ...v, pendingApprovals, status: activeStatus(pendingApprovals) };
    }
    case 'AssistantTextProduced':
    case 'ToolCallStarted':
      return v;
    case 'TurnCompleted':
      return endTurn(v, 'completed', revision);
    case 'TaskFailed':
      return endTurn({ ...v, error: event.data.error }, 'failed', revision);
    case 'TaskCancelled': {
      const dropped = new Set(event.data.droppedMessageIds);
      return { ...v, status: 'cancelled', waitingMessageIds: v.waitingMessageIds.filter((id) => !dropped.has(id)), pendingApprovals: [] };
    }
    case 'ArtifactRecorded': {
      const { callId: _call, ...record } = event.data;
      const artifacts = [...v.artifacts.filter((a) => a.path !== record.path), record].sort((a, b) => a.path.localeCompare(b.path));
      return { ...v, artifacts };
    }
    case 'ArtifactRemoved':
      return { ...v, artifacts: v.artifacts.filter((a) => a.path !== event.data.path) };
    case 'SandboxExpired':
      return { ...v, sandbox: 'expired' };
    case 'SandboxRestored':
      return { ...v, sandbox: 'active' };
    case 'SandboxSnapshotFailed':
      return v; // still `active`: the workspace stays up as it was, and the stream's `sandbox` event says why
    case 'SecretsUnavailable':
      return { ...v, notices: [...v.notices, event.data.reason] };
    case 'McpServerUnavailable':
      return { ...v, notices: [...v.notices, mcpNotice(event.data)] };
    case 'ArtifactLinksChanged':
      return { ...v, escapingLinks: event.data.links };
    case 'EgressRecorded':
      return v; // the history and the stream hold each connection; the task view has no tally of them
    case 'TaskForked': {
      const forked = { ...v, autoExecute: event.data.autoExecute, forkedFrom: { taskId: event.data.taskId, eventId: event.data.eventId } };
      // Its running turn waits to be admitted again (MAX_RUNNING_TASKS_PER_TENANT).
      return event.data.resumes ? { ...forked, status: 'pending' } : forked;
    }
    case 'TurnResumed':
      return { ...v, status: activeStatus(v.pendingApprovals) };
    case 'TurnRolledBack':
      // The history keeps the turn; the files (so the artifacts) are the turn start's again.
      return { ...v, artifacts: [...event.data.artifacts].sort((a, b) => a.path.localeCompare(b.path)) };
    default: {
      const _exhaustive: never = event;
      return _exhaustive;
    }
  }
}
