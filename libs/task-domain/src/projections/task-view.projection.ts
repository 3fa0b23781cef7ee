import { ArtifactRecord, TaskEvent, TokenUsage, UploadedFile } from '../task.events';
import { TaskStatus } from '../task.state';

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
  readonly envKeys: readonly string[];
  readonly files: readonly UploadedFile[];
  /** Files under downloads/, by path order. */
  readonly artifacts: readonly ArtifactRecord[];
  /** Names of the task's secrets (never their values). */
  readonly secretNames: readonly string[];
  /** Things the caller should know that are not errors, e.g. secrets lost in a restart. */
  readonly notices: readonly string[];
  /** `active`, or `expired` while the workspace waits in a snapshot. */
  readonly sandbox: 'active' | 'expired';
  /** Number of the latest turn (0 until the first starts). */
  readonly turn: number;
  /** Revision of the first event of the latest turn: where the default SSE replay begins. */
  readonly turnStartEventId: number;
  /** Revision of the last event applied: the id of the task's latest SSE event. */
  readonly lastEventId: number;
}

export interface ProjectedEvent {
  readonly event: TaskEvent;
  readonly revision: number;
  readonly recordedAt: string;
}

export const TASK_VIEW_HANDLES: readonly TaskEvent['type'][] = [
  'TaskCreated',
  'UserMessageAdded',
  'TurnStarted',
  'ModelResponded',
  'AssistantTextProduced',
  'ToolCallRequested',
  'ToolCallDecided',
  'ToolCallApprovalExpired',
  'ToolCallStarted',
  'ToolCallFinished',
  'TurnCompleted',
  'TaskFailed',
  'TaskCancelled',
  'ArtifactRecorded',
  'ArtifactRemoved',
  'SandboxExpired',
  'SandboxRestored',
  'SecretsUnavailable',
];

const ACTIVE: readonly TaskStatus[] = ['pending', 'running', 'awaiting_approval'];

const withoutApproval = (v: TaskView, callId: string) => v.pendingApprovals.filter((p) => p.callId !== callId);

/** Status while a turn runs: waiting when any call of it waits for a decision. */
const activeStatus = (pending: readonly PendingApproval[]): TaskStatus => (pending.length > 0 ? 'awaiting_approval' : 'running');

/**
 * Where the default replay of a turn begins: at the user's message when it started the turn right
 * away (the first message, or a follow-up sent to an idle task), else at the TurnStarted itself.
 */
function turnStart(v: TaskView, started: { turn: number; messageId: string }, revision: number): number {
  const message = v.messages.find((m) => m.id === started.messageId);
  if (started.turn === 1 && message) return message.eventId;
  return message && message.eventId === revision - 1 ? message.eventId : revision;
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
      usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 },
      ...(d.maxTokens !== undefined ? { maxTokens: d.maxTokens } : {}),
      envKeys: Object.keys(d.env),
      files: d.files,
      artifacts: [],
      secretNames: d.secretNames,
      notices: [],
      sandbox: 'active',
      turn: 0,
      turnStartEventId: revision,
      lastEventId: revision,
    };
  }
  if (!view || revision <= view.lastEventId) return view;
  const v: TaskView = { ...view, updatedAt: recordedAt, lastEventId: revision };
  switch (event.type) {
    case 'UserMessageAdded': {
      const messages = [...v.messages, { id: event.data.messageId, text: event.data.text, createdAt: recordedAt, eventId: revision }];
      return event.data.maxTokens === undefined ? { ...v, messages } : { ...v, messages, maxTokens: event.data.maxTokens };
    }
    case 'TurnStarted': {
      const { error: _previous, ...rest } = v;
      return { ...rest, status: 'running', turn: event.data.turn, turnStartEventId: turnStart(v, event.data, revision), pendingApprovals: [] };
    }
    case 'ModelResponded': {
      const u = event.data.usage;
      const usage = {
        inputTokens: v.usage.inputTokens + u.inputTokens,
        outputTokens: v.usage.outputTokens + u.outputTokens,
        totalTokens: v.usage.totalTokens + u.totalTokens,
      };
      return { ...v, usage };
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
      if (!ACTIVE.includes(v.status)) return v;
      const pendingApprovals = withoutApproval(v, event.data.callId);
      return { ...v, pendingApprovals, status: activeStatus(pendingApprovals) };
    }
    case 'AssistantTextProduced':
    case 'ToolCallStarted':
      return v;
    case 'TurnCompleted':
      return { ...v, status: 'completed', pendingApprovals: [] };
    case 'TaskFailed':
      return { ...v, status: 'failed', error: event.data.error, pendingApprovals: [] };
    case 'TaskCancelled':
      return { ...v, status: 'cancelled', pendingApprovals: [] };
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
    case 'SecretsUnavailable':
      return { ...v, notices: [...v.notices, event.data.reason] };
    default: {
      const _exhaustive: never = event;
      return _exhaustive;
    }
  }
}
