// ─── Events ──────────────────────────────────────────────────────────────────────────────────
// A task's history is the append-only stream of these events; everything else is derived.
// Events are long-lived records: `TASK_EVENT_SCHEMA_VERSIONS` says which version of each `data`
// shape this code writes, and proto/agent/v1/task_events.proto holds the wire schema (a test
// keeps the two from drifting).

import type { CheckpointRef, WorkspaceChange } from './checkpoints/checkpoint.types';

export interface Event<Type extends string, Data> {
  readonly type: Type;
  readonly data: Data;
}

export interface TokenUsage {
  /** Every input token, those read from and written to the provider's prompt cache included. */
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly totalTokens: number;
  /** The input tokens read from the prompt cache; 0 when the provider reports none. */
  readonly cacheReadTokens: number;
  /** The input tokens written to the prompt cache; 0 when the provider reports none. */
  readonly cacheWriteTokens: number;
  /**
   * USD the calls cost at the price table of their time (docs/operations/model-providers.md
   * "Prices and cost"); null when any of them had no price.
   */
  readonly costUsd: number | null;
}

/**
 * Usage as ModelResponded records it: events written before the cache counts existed have none,
 * and those written before cost was counted have no `costUsd` (read as null: no price known).
 */
export type RecordedTokenUsage = Omit<TokenUsage, 'cacheReadTokens' | 'cacheWriteTokens' | 'costUsd'> &
  Partial<Pick<TokenUsage, 'cacheReadTokens' | 'cacheWriteTokens' | 'costUsd'>>;

export const ZERO_USAGE: TokenUsage = {
  inputTokens: 0,
  outputTokens: 0,
  totalTokens: 0,
  cacheReadTokens: 0,
  cacheWriteTokens: 0,
  costUsd: 0,
};

/** `total` plus one recorded call's usage, a missing cache count being 0 and a missing cost null. */
export function addUsage(total: TokenUsage, u: RecordedTokenUsage): TokenUsage {
  return {
    inputTokens: total.inputTokens + u.inputTokens,
    outputTokens: total.outputTokens + u.outputTokens,
    totalTokens: total.totalTokens + u.totalTokens,
    cacheReadTokens: total.cacheReadTokens + (u.cacheReadTokens ?? 0),
    cacheWriteTokens: total.cacheWriteTokens + (u.cacheWriteTokens ?? 0),
    costUsd: total.costUsd === null || u.costUsd === undefined || u.costUsd === null ? null : addUsd(total.costUsd, u.costUsd),
  };
}

/** Sums of USD kept to 1e-9, so 0.1 + 0.2 reads 0.3. */
export const addUsd = (a: number, b: number): number => Math.round((a + b) * 1e9) / 1e9;

/** A turn's usage as its end records it: without `costUsd` when written before cost was counted. */
export type RecordedTurnUsage = Omit<TokenUsage, 'costUsd'> & { readonly costUsd?: number | null };

/** What a recorded end-of-turn usage reads as: cost absent (recorded before cost was counted) is null. */
export const withCost = (u: RecordedTurnUsage): TokenUsage => ({
  ...u,
  costUsd: u.costUsd ?? null,
});

export interface UploadedFile {
  readonly name: string;
  readonly size: number;
}

/** Why a call runs without asking: `proceed_always` earlier in the task (see approvals/approval-rules.ts). */
export interface ApprovalRule {
  readonly toolName: string;
  /** For `shell`: the programs this rule approves; a later line runs without asking when all of its programs are approved. */
  readonly programs?: readonly string[];
  /** Written only by records from before `programs`: one approved program. Read as `programs: [program]`. */
  readonly program?: string;
  /** For `write_file` / `edit_file`: the workspace-relative path this rule approves. */
  readonly path?: string;
}

export type ToolCallStatus = 'awaiting_approval' | 'approved';
export type ToolResultStatus = 'success' | 'error' | 'cancelled';
export type ApprovalOutcome = 'proceed_once' | 'proceed_always' | 'cancel';

export type TaskCreated = Event<
  'TaskCreated',
  {
    readonly taskId: string;
    readonly tenantId: string;
    readonly messageId: string;
    readonly text: string;
    readonly autoExecute: boolean;
    readonly showInHistory: boolean;
    /** Ordinary configuration; GET shows only its keys. */
    readonly env: Readonly<Record<string, string>>;
    /** Names only: secret values never reach an event in plain text. */
    readonly secretNames: readonly string[];
    /** The secrets' values, encrypted (docs/operations/security.md "Secrets at rest"); absent on tasks without secrets and on older events. */
    readonly sealedSecrets?: SealedSecrets;
    readonly files: readonly UploadedFile[];
    /**
     * The task's own MCP servers (Streamable HTTP). Header values keep their `{{secrets.NAME}}`
     * references; the values are filled in by the sandbox on connect. Absent on older events.
     */
    readonly mcpServers?: Readonly<Record<string, TaskMcpServer>>;
    /** Total tokens the task may spend over all its turns (the create field, or TASK_MAX_TOKENS); absent: unlimited. */
    readonly maxTokens?: number;
    /** USD the task's priced model calls may cost over all its turns (the create field, or TASK_MAX_COST_USD); absent: unlimited. */
    readonly maxCostUsd?: number;
    /**
     * Where the task's webhooks go (docs/api.md "Webhooks"): the create field, or WEBHOOK_URL when
     * the task was created. Recorded, so the destination never changes with the configuration and
     * tasks from before webhooks get none. Absent: the task sends no webhooks.
     */
    readonly webhookUrl?: string;
    /**
     * True when `webhookUrl` is WEBHOOK_URL's, not the caller's: an operator's URL may carry a token
     * (Slack-style), so it is used for delivery only and never shown to the tenant.
     */
    readonly webhookUrlIsDefault?: boolean;
    /**
     * Where the task's commands may connect through the egress proxy (docs/api.md "Network"): the
     * create field as given. Absent: SANDBOX_EGRESS_ALLOW, as the sandbox has it when a command runs.
     */
    readonly network?: TaskNetwork;
    /** The workspace with the uploads placed (internal, never shown); absent: no uploads. */
    readonly checkpoint?: CheckpointRef;
    /** The schedule that started the task (docs/api.md "Schedules"); absent: created by a caller. */
    readonly scheduleId?: string;
  }
>;

/** The create field `network`: host patterns (`*`, `name`, `*.name`, each with an optional `:port`); `[]` lets nothing out. */
export interface TaskNetwork {
  readonly allow: readonly string[];
}

/**
 * A task's secrets as stored: an AES-256-GCM envelope (libs/common/src/secrets/secret-envelope.ts).
 * The byte fields are base64 of `iv ‖ ciphertext ‖ tag`; only a process holding the key opens it.
 */
export interface SealedSecrets {
  readonly version: number;
  /** Fingerprint of the key-encryption key that wrapped the data key. */
  readonly keyId: string;
  readonly wrappedKey: string;
  readonly ciphertext: string;
}

/** A Streamable HTTP MCP server a task brought along (docs/api.md "POST /api/v1/tasks": `mcpServers`). */
export interface TaskMcpServer {
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
}
export type UserMessageAdded = Event<
  'UserMessageAdded',
  {
    readonly messageId: string;
    readonly text: string;
    readonly queued: boolean;
    /** The follow-up's own maxTokens: the task's token budget from now on. */
    readonly maxTokens?: number;
    /** The follow-up's own maxCostUsd: the task's cost budget from now on. */
    readonly maxCostUsd?: number;
  }
>;
export type TurnStarted = Event<'TurnStarted', { readonly turn: number; readonly messageId: string }>;
export type ModelResponded = Event<
  'ModelResponded',
  {
    readonly turn: number;
    readonly step: number;
    readonly model: string;
    readonly finishReason: string;
    readonly usage: RecordedTokenUsage;
  }
>;
export type AssistantTextProduced = Event<'AssistantTextProduced', { readonly turn: number; readonly step: number; readonly text: string }>;
export type ToolCallRequested = Event<
  'ToolCallRequested',
  {
    readonly turn: number;
    readonly step: number;
    readonly callId: string;
    readonly toolName: string;
    readonly args: Readonly<Record<string, unknown>>;
    readonly status: ToolCallStatus;
    /** Set when a `proceed_always` rule approved the call without asking. */
    readonly approvedByRule?: ApprovalRule;
  }
>;
export type ToolCallDecided = Event<
  'ToolCallDecided',
  {
    readonly callId: string;
    readonly outcome: ApprovalOutcome;
    readonly approved: boolean;
    /** The rule `proceed_always` added for the rest of the task. */
    readonly rule?: ApprovalRule;
  }
>;
/** Nobody decided within APPROVAL_TIMEOUT_MS: the call is treated as declined (a cancelled ToolCallFinished follows). */
export type ToolCallApprovalExpired = Event<
  'ToolCallApprovalExpired',
  { readonly callId: string; readonly toolName: string; readonly timeoutMs: number }
>;
export type ToolCallStarted = Event<'ToolCallStarted', { readonly callId: string; readonly toolName: string }>;
export type ToolCallFinished = Event<
  'ToolCallFinished',
  {
    readonly callId: string;
    readonly toolName: string;
    readonly status: ToolResultStatus;
    readonly output: string;
    readonly exitCode?: number;
    readonly durationMs: number;
    /** What the call changed in the workspace (files and links; at most MAX_CHANGES), paths masked; absent: nothing. */
    readonly changes?: readonly WorkspaceChange[];
    readonly changesTruncated?: true;
    /** The workspace right after the call (internal, never shown to callers); absent: unchanged, or not taken. */
    readonly checkpoint?: CheckpointRef;
    /** Why no checkpoint could be taken after the call (too large, unreadable); the task went on. */
    readonly checkpointSkipped?: string;
  }
>;
/** A file under the workspace's `downloads/`, as stored in the object store. */
export interface ArtifactRecord {
  /** Workspace-relative, always under `downloads/`. */
  readonly path: string;
  /** The bare file name. */
  readonly name: string;
  readonly size: number;
  readonly sha256: string;
  readonly category: string;
  readonly mimeType: string;
  readonly modifiedAt: string;
  /** Where the bytes are kept (object store key); internal, never shown to callers. */
  readonly objectKey: string;
}

/** Recorded after the tool call that left the file new or changed. */
export type ArtifactRecorded = Event<'ArtifactRecorded', ArtifactRecord & { readonly callId: string }>;
export type ArtifactRemoved = Event<'ArtifactRemoved', { readonly path: string; readonly callId: string }>;
/** The idle sandbox was archived into the object store and torn down. */
export type SandboxExpired = Event<
  'SandboxExpired',
  {
    readonly snapshotKey: string;
    readonly sizeBytes: number;
    readonly idleMs: number;
    /** Entries the snapshot left out (FIFOs, sockets, devices…), as "path: why", secrets masked; gone after the restore. */
    readonly skipped?: readonly string[];
  }
>;
/** A later tool call brought the workspace back from its snapshot. */
export type SandboxRestored = Event<'SandboxRestored', { readonly snapshotKey: string; readonly durationMs: number }>;
/**
 * The idle sandbox could not be archived, `attempts` times in a row (SANDBOX_SNAPSHOT_MAX_ATTEMPTS),
 * so no more idle snapshots are tried until the task is used again. Nothing was lost: the
 * workspace stays up as it was, neither archived nor removed.
 */
export type SandboxSnapshotFailed = Event<
  'SandboxSnapshotFailed',
  {
    /** The last attempt's error, secrets masked. */
    readonly reason: string;
    readonly attempts: number;
    /** What the task still has: `workspace`, the live sandbox as it was. */
    readonly kept: 'workspace';
  }
>;
/**
 * A process could not open the task's secrets (no key, a wrong key, an altered envelope, or a
 * task from before secrets were durable), so the turn ends failed in the same append (SSE
 * `notice`). Written before durable secrets, it meant the secrets were lost in a restart.
 */
export type SecretsUnavailable = Event<'SecretsUnavailable', { readonly names: readonly string[]; readonly reason: string }>;

/**
 * The symlinks under `downloads/` that lead out of the workspace changed with this call: they are
 * never artifacts, and a download whose path goes through one is refused as outside the
 * workspace (400) rather than unknown (404). Paths only, secrets masked; at most 100.
 */
/** One connection through a task's egress proxy: where it went, whether it was let through (and why not), what it carried. */
export interface EgressRecord {
  readonly host: string;
  readonly port: number;
  readonly allowed: boolean;
  /** Why it was refused (names the rule or setting, never a DNS answer); absent when allowed. */
  readonly reason?: string;
  /** Bytes from the sandbox to the destination, and back. */
  readonly bytesOut: number;
  readonly bytesIn: number;
  readonly durationMs: number;
}

/**
 * One connection a command made through the sandbox's egress proxy (SANDBOX_NETWORK=egress), let
 * through or refused, recorded right before the call's ToolCallFinished. `reason` names the rule
 * that refused it; never what a name resolved to.
 */
export type EgressRecorded = Event<'EgressRecorded', EgressRecord & { readonly callId: string }>;
export type ArtifactLinksChanged = Event<'ArtifactLinksChanged', { readonly callId: string; readonly links: readonly string[] }>;
/**
 * One of the task's MCP servers (its own, or the service's) could not be used: it was refused
 * (a private address not in MCP_ALLOW_HOSTS), or failed to connect or to list its tools. Its tools
 * are left out of the turn; the caller sees why (SSE `notice`, `notices` on GET). Once per server
 * and reason.
 */
export type McpServerUnavailable = Event<'McpServerUnavailable', { readonly server: string; readonly reason: string }>;

/**
 * Closes the copy of another task's events 1..`eventId` that begins a fork (docs/api.md
 * "POST /api/v1/tasks/{id}/fork"): the task goes on from there as the source stood after that
 * event. Calls of the open step that had started but not finished by then run again; the fork's
 * TaskCreated is the source's with the fork's own id (and secrets sealed for it).
 */
export type TaskForked = Event<
  'TaskForked',
  {
    /** The source task. */
    readonly taskId: string;
    /** The source's event (public id, its stream revision) the fork was taken after. */
    readonly eventId: number;
    /** The fork's autoExecute from now on: the request's, else the source's. */
    readonly autoExecute: boolean;
    /**
     * The turn that was running at the fork point, when turns wait for admission
     * (MAX_RUNNING_TASKS_PER_TENANT): the fork waits `pending` until TurnResumed, like any turn to
     * start. Absent: nothing was running, or it goes on at once.
     */
    readonly resumes?: ResumedTurn;
  }
>;

export interface ResumedTurn {
  readonly turn: number;
  /** The message the turn answers: its place in the tenant's line is the fork's copy of it. */
  readonly messageId: string;
}

/** A fork's turn that was running at its fork point was admitted and goes on (see TaskForked `resumes`). */
export type TurnResumed = Event<'TurnResumed', ResumedTurn>;

// `usage` on the three ends of a turn: what the turn's model calls spent (absent on events written
// before it was recorded).
export type TurnCompleted = Event<'TurnCompleted', { readonly turn: number; readonly usage?: RecordedTurnUsage }>;
export type TaskFailed = Event<'TaskFailed', { readonly turn: number; readonly error: string; readonly usage?: RecordedTurnUsage }>;
export type TaskCancelled = Event<
  'TaskCancelled',
  {
    readonly turn: number;
    readonly droppedMessageIds: readonly string[];
    readonly usage?: RecordedTurnUsage;
    /** `interrupted`: a follow-up sent with ifRunning `interrupt` or `rollback` stopped the turn; its turn follows at once. */
    readonly reason?: 'interrupted';
  }
>;
/**
 * The turn just interrupted (TaskCancelled `interrupted`) is undone (docs/api.md "Follow-ups"):
 * the workspace goes back to `checkpoint`, the one in effect when the turn started (absent: the
 * workspace was empty then), and the model's context leaves out the events `fromEventId` to
 * `toEventId` (the turn's TurnStarted to its TaskCancelled). The history keeps them.
 */
export type TurnRolledBack = Event<
  'TurnRolledBack',
  {
    readonly turn: number;
    readonly fromEventId: number;
    readonly toEventId: number;
    /** The workspace as it was when the turn started (internal, never shown); absent: empty. */
    readonly checkpoint?: CheckpointRef;
    /** The task's artifacts as they were when the turn started: the artifact list from now on (internal). */
    readonly artifacts: readonly ArtifactRecord[];
  }
>;

export type TaskEvent =
  | TaskCreated
  | UserMessageAdded
  | TurnStarted
  | ModelResponded
  | AssistantTextProduced
  | ToolCallRequested
  | ToolCallDecided
  | ToolCallApprovalExpired
  | ToolCallStarted
  | ToolCallFinished
  | TurnCompleted
  | TaskFailed
  | TaskCancelled
  | ArtifactRecorded
  | ArtifactRemoved
  | SandboxExpired
  | SandboxRestored
  | SandboxSnapshotFailed
  | SecretsUnavailable
  | McpServerUnavailable
  | ArtifactLinksChanged
  | EgressRecorded
  | TaskForked
  | TurnResumed
  | TurnRolledBack;

export type TaskEventType = TaskEvent['type'];
export type TaskEventData<T extends TaskEventType> = Extract<TaskEvent, { type: T }>['data'];

export const TASK_EVENT_SCHEMA_VERSIONS: Record<TaskEventType, number> = {
  TaskCreated: 1,
  UserMessageAdded: 1,
  TurnStarted: 1,
  ModelResponded: 1,
  AssistantTextProduced: 1,
  ToolCallRequested: 1,
  ToolCallDecided: 1,
  ToolCallApprovalExpired: 1,
  ToolCallStarted: 1,
  ToolCallFinished: 1,
  TurnCompleted: 1,
  TaskFailed: 1,
  TaskCancelled: 1,
  ArtifactRecorded: 1,
  ArtifactRemoved: 1,
  SandboxExpired: 1,
  SandboxRestored: 1,
  SandboxSnapshotFailed: 1,
  SecretsUnavailable: 1,
  McpServerUnavailable: 1,
  ArtifactLinksChanged: 1,
  EgressRecorded: 1,
  TaskForked: 1,
  TurnResumed: 1,
  TurnRolledBack: 1,
};
