import type {
  ApprovalRule,
  ArtifactRecord,
  ResumedTurn,
  SealedSecrets,
  TaskEvent,
  TaskMcpServer,
  TaskNetwork,
  ToolCallStatus,
  ToolResultStatus,
  TokenUsage,
} from './task.events';
import { addUsage, addUsd, ZERO_USAGE } from './task.events';
import type { CheckpointRef } from './checkpoints/checkpoint.types';
import type { StoredArtifacts } from './artifacts/stored-artifacts';
import { NOTHING_STORED, withStoredObject } from './artifacts/stored-artifacts';

// ─── State ───────────────────────────────────────────────────────────────────────────────────
// What the decider and the agent loop need to know about a task, folded from its events.

export type TaskStatus = 'pending' | 'running' | 'awaiting_approval' | 'completed' | 'failed' | 'cancelled';

export type ToolCallPhase = ToolCallStatus | 'running' | 'finished';

export interface ToolCallState {
  readonly callId: string;
  readonly toolName: string;
  readonly args: Readonly<Record<string, unknown>>;
  readonly turn: number;
  readonly step: number;
  readonly phase: ToolCallPhase;
  readonly result?: ToolResultStatus;
}

export interface QueuedMessage {
  readonly messageId: string;
  readonly text: string;
}

export interface ExistingTask {
  readonly exists: true;
  readonly status: TaskStatus;
  readonly tenantId: string;
  readonly autoExecute: boolean;
  /** Number of the latest turn started; 0 before the first. */
  readonly turn: number;
  /** Model calls made in the current turn. */
  readonly step: number;
  /** Messages not yet answered, oldest first (the first message waits here until turn 1). */
  readonly queued: readonly QueuedMessage[];
  /** Every call the model requested in this task, oldest first. */
  readonly calls: readonly ToolCallState[];
  readonly rules: readonly ApprovalRule[];
  readonly usage: TokenUsage;
  /** What the model calls of the current turn spent; zero again once the turn ends. */
  readonly turnUsage: TokenUsage;
  /** Total tokens the task may spend over all turns (`usage.totalTokens` counts against it); absent: unlimited. */
  readonly maxTokens?: number;
  /**
   * USD the task's priced model calls cost so far: what counts against maxCostUsd (a call without
   * a price adds nothing here, while it makes `usage.costUsd` null).
   */
  readonly pricedCostUsd: number;
  /** USD the task's model calls may cost over all turns; absent: unlimited. */
  readonly maxCostUsd?: number;
  /** Ordinary configuration: environment variables of the sandbox's processes. */
  readonly env: Readonly<Record<string, string>>;
  readonly secretNames: readonly string[];
  /** The secrets' values, encrypted: each process that needs them opens them with its key. */
  readonly sealedSecrets?: SealedSecrets;
  /** The task's own MCP servers (headers with `{{secrets.NAME}}` references, never values). */
  readonly mcpServers: Readonly<Record<string, TaskMcpServer>>;
  /** Where its commands may connect through the egress proxy; absent: SANDBOX_EGRESS_ALLOW. */
  readonly network?: TaskNetwork;
  /** Current artifacts by path. */
  readonly artifacts: Readonly<Record<string, ArtifactRecord>>;
  /** What the artifact store holds for the task (removed artifacts' bytes included): counted against SANDBOX_DISK_QUOTA_BYTES. */
  readonly storedArtifacts: StoredArtifacts;
  /** The workspace as the last tool call that changed it left it (libs/checkpoints). */
  readonly lastCheckpoint?: CheckpointRef;
  /** Set while the sandbox is torn down and its files wait in a snapshot. */
  readonly expiredSnapshotKey?: string;
  /** Symlinks under downloads/ that lead out of the workspace, as the last call left them. */
  readonly escapingLinks: readonly string[];
  /** The last reason reported for each MCP server that could not be used. */
  readonly mcpUnavailable: Readonly<Record<string, string>>;
  /** Set on a fork: the task and event it was taken after. */
  readonly forkedFrom?: ForkOrigin;
  /** A fork's turn that was running at its fork point and waits (`pending`) to be admitted again. */
  readonly resuming?: ResumedTurn;
  /**
   * Turns rolled back so far (TurnRolledBack): a sandbox whose live workspace has seen fewer
   * throws it away and brings back `lastCheckpoint`. Absent: none.
   */
  readonly rollbacks?: number;
}

export interface ForkOrigin {
  readonly taskId: string;
  readonly eventId: number;
}

export type TaskState = { readonly exists: false } | ExistingTask;

export const initialTaskState = (): TaskState => ({ exists: false });

/** The task has work in hand: a turn that runs, or a message waiting for its turn to start. */
export const isTurnActive = (status: TaskStatus): boolean => status === 'pending' || status === 'running' || status === 'awaiting_approval';

/** A turn has started and not ended (a `pending` task's next turn has not started yet). */
export const isTurnRunning = (status: TaskStatus): boolean => status === 'running' || status === 'awaiting_approval';

/** How a turn that has ended, or never started, is left: waiting when a message waits for the next one. */
const idleStatus = (s: ExistingTask, ended: TaskStatus): TaskStatus => (s.queued.length > 0 ? 'pending' : ended);

/** A turn is awaiting approval while the first unfinished call (execution is in order) waits. */
const statusOfOpenTurn = (calls: readonly ToolCallState[]): TaskStatus =>
  calls.find((c) => c.phase !== 'finished')?.phase === 'awaiting_approval' ? 'awaiting_approval' : 'running';

/** Calls of the current turn's latest model response, in the model's order. */
export const openCallsOf = (s: ExistingTask): ToolCallState[] => s.calls.filter((c) => c.turn === s.turn && c.step === s.step);

const withCalls = (s: ExistingTask, calls: readonly ToolCallState[]): ExistingTask => {
  const next = { ...s, calls };
  return isTurnRunning(s.status) ? { ...next, status: statusOfOpenTurn(openCallsOf(next)) } : next;
};

const updateCall = (calls: readonly ToolCallState[], callId: string, change: Partial<ToolCallState>): ToolCallState[] =>
  calls.map((c) => (c.callId === callId ? { ...c, ...change } : c));

export function evolve(state: TaskState, event: TaskEvent): TaskState {
  if (event.type === 'TaskCreated') {
    const d = event.data;
    return {
      exists: true,
      status: 'pending',
      tenantId: d.tenantId,
      autoExecute: d.autoExecute,
      turn: 0,
      step: 0,
      queued: [{ messageId: d.messageId, text: d.text }],
      calls: [],
      rules: [],
      usage: ZERO_USAGE,
      turnUsage: ZERO_USAGE,
      pricedCostUsd: 0,
      env: d.env,
      secretNames: d.secretNames,
      mcpServers: d.mcpServers ?? {},
      artifacts: {},
      storedArtifacts: NOTHING_STORED,
      mcpUnavailable: {},
      escapingLinks: [],
      ...(d.sealedSecrets ? { sealedSecrets: d.sealedSecrets } : {}),
      ...(d.maxTokens !== undefined ? { maxTokens: d.maxTokens } : {}),
      ...(d.maxCostUsd !== undefined ? { maxCostUsd: d.maxCostUsd } : {}),
      ...(d.network !== undefined ? { network: d.network } : {}),
      ...(d.checkpoint ? { lastCheckpoint: d.checkpoint } : {}),
    };
  }
  if (!state.exists) return state;
  const s = state;
  switch (event.type) {
    case 'UserMessageAdded': {
      const queued = [...s.queued, { messageId: event.data.messageId, text: event.data.text }];
      // A message to a finished task waits for its turn (which starts in the same append, unless
      // turns wait for admission, MAX_RUNNING_TASKS_PER_TENANT).
      const status = isTurnActive(s.status) ? s.status : 'pending';
      const { maxTokens, maxCostUsd } = event.data;
      return {
        ...s,
        status,
        queued,
        ...(maxTokens !== undefined ? { maxTokens } : {}),
        ...(maxCostUsd !== undefined ? { maxCostUsd } : {}),
      };
    }
    case 'TurnStarted':
      return {
        ...s,
        status: 'running',
        turn: event.data.turn,
        step: 0,
        turnUsage: ZERO_USAGE,
        queued: s.queued.filter((m) => m.messageId !== event.data.messageId),
      };
    case 'ModelResponded': {
      const u = event.data.usage;
      return {
        ...s,
        step: event.data.step,
        usage: addUsage(s.usage, u),
        turnUsage: addUsage(s.turnUsage, u),
        pricedCostUsd: u.costUsd ? addUsd(s.pricedCostUsd, u.costUsd) : s.pricedCostUsd,
      };
    }
    case 'AssistantTextProduced':
      return s;
    case 'ToolCallRequested': {
      const d = event.data;
      const calls = [...s.calls, { callId: d.callId, toolName: d.toolName, args: d.args, turn: d.turn, step: d.step, phase: d.status }];
      return withCalls(s, calls);
    }
    case 'ToolCallDecided': {
      const d = event.data;
      // A cancelled call is closed by the ToolCallFinished that always follows it.
      const calls = d.approved ? updateCall(s.calls, d.callId, { phase: 'approved' }) : s.calls;
      return { ...withCalls(s, calls), rules: d.rule ? [...s.rules, d.rule] : s.rules };
    }
    case 'ToolCallApprovalExpired':
      return s; // the ToolCallFinished that always follows closes the call
    case 'ToolCallStarted':
      return { ...s, calls: updateCall(s.calls, event.data.callId, { phase: 'running' }) };
    case 'ToolCallFinished': {
      const finished = withCalls(s, updateCall(s.calls, event.data.callId, { phase: 'finished', result: event.data.status }));
      return event.data.checkpoint ? { ...finished, lastCheckpoint: event.data.checkpoint } : finished;
    }
    case 'TurnCompleted':
      return { ...s, status: idleStatus(s, 'completed'), turnUsage: ZERO_USAGE };
    case 'TaskFailed':
      return { ...s, status: idleStatus(s, 'failed'), turnUsage: ZERO_USAGE };
    case 'TaskCancelled': {
      const dropped = new Set(event.data.droppedMessageIds);
      const { resuming: _dropped, ...rest } = s;
      return { ...rest, status: 'cancelled', turnUsage: ZERO_USAGE, queued: s.queued.filter((m) => !dropped.has(m.messageId)) };
    }
    case 'ArtifactRecorded': {
      const { callId: _call, ...record } = event.data;
      return { ...s, artifacts: { ...s.artifacts, [record.path]: record }, storedArtifacts: withStoredObject(s.storedArtifacts, record) };
    }
    case 'ArtifactRemoved': {
      const { [event.data.path]: _removed, ...artifacts } = s.artifacts;
      return { ...s, artifacts };
    }
    case 'SandboxExpired':
      return { ...s, expiredSnapshotKey: event.data.snapshotKey };
    case 'SandboxRestored': {
      const { expiredSnapshotKey: _restored, ...rest } = s;
      return rest;
    }
    case 'SandboxSnapshotFailed':
      return s; // nothing to fold: the sandbox stays up as it was (the sandbox service counts its attempts)
    case 'SecretsUnavailable':
      return s; // nothing to fold: the TaskFailed appended with it ends the turn
    case 'ArtifactLinksChanged':
      return { ...s, escapingLinks: event.data.links };
    case 'McpServerUnavailable':
      return { ...s, mcpUnavailable: { ...s.mcpUnavailable, [event.data.server]: event.data.reason } };
    case 'EgressRecorded':
      return s; // a record of what happened; nothing the decider checks depends on it
    case 'TaskForked': {
      // A call started but unfinished at the fork point never finishes in the fork: it runs again,
      // as if just approved ("re-run from this step"), instead of being reported as interrupted.
      const calls = s.calls.map((c) => (c.phase === 'running' ? { ...c, phase: 'approved' as const } : c));
      const { taskId, eventId, autoExecute, resumes } = event.data;
      const forked = { ...withCalls(s, calls), autoExecute, forkedFrom: { taskId, eventId } };
      return resumes ? { ...forked, status: 'pending', resuming: resumes } : forked;
    }
    case 'TurnResumed': {
      const { resuming: _admitted, ...rest } = s;
      return { ...rest, status: statusOfOpenTurn(openCallsOf(s)) };
    }
    case 'TurnRolledBack': {
      // The workspace is the turn start's checkpoint from now on, not the snapshot of an expiry during the turn.
      const { lastCheckpoint: _undone, expiredSnapshotKey: _stale, ...rest } = s;
      const rollbacks = (s.rollbacks ?? 0) + 1;
      const artifacts = Object.fromEntries(event.data.artifacts.map((a) => [a.path, a]));
      const undone = { ...rest, rollbacks, artifacts };
      return event.data.checkpoint ? { ...undone, lastCheckpoint: event.data.checkpoint } : undone;
    }
    default: {
      const _exhaustive: never = event;
      return _exhaustive;
    }
  }
}
