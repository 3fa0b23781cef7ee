import type { ApprovalRule, SealedSecrets, TaskEventData, TaskEventType } from '../task.events';

// The data field names of every event at runtime, for the check against the wire schema
// (proto/agent/v1/task_events.proto). The types below make a missing or unknown name a compile
// error, so this list cannot drift from the TypeScript event types either.

type FieldList = { readonly [T in TaskEventType]: readonly (keyof TaskEventData<T>)[] };

export const TASK_EVENT_FIELDS = {
  TaskCreated: [
    'taskId',
    'tenantId',
    'messageId',
    'text',
    'autoExecute',
    'showInHistory',
    'env',
    'secretNames',
    'sealedSecrets',
    'files',
    'mcpServers',
    'maxTokens',
    'maxCostUsd',
    'webhookUrl',
    'webhookUrlIsDefault',
    'network',
    'checkpoint',
    'scheduleId',
  ],
  UserMessageAdded: ['messageId', 'text', 'queued', 'maxTokens', 'maxCostUsd'],
  TurnStarted: ['turn', 'messageId'],
  ModelResponded: ['turn', 'step', 'model', 'finishReason', 'usage'],
  AssistantTextProduced: ['turn', 'step', 'text'],
  ToolCallRequested: ['turn', 'step', 'callId', 'toolName', 'args', 'status', 'approvedByRule'],
  ToolCallDecided: ['callId', 'outcome', 'approved', 'rule'],
  ToolCallApprovalExpired: ['callId', 'toolName', 'timeoutMs'],
  ToolCallStarted: ['callId', 'toolName'],
  ToolCallFinished: [
    'callId',
    'toolName',
    'status',
    'output',
    'exitCode',
    'durationMs',
    'changes',
    'changesTruncated',
    'checkpoint',
    'checkpointSkipped',
  ],
  TurnCompleted: ['turn', 'usage'],
  TaskFailed: ['turn', 'error', 'usage'],
  TaskCancelled: ['turn', 'droppedMessageIds', 'usage', 'reason'],
  ArtifactRecorded: ['path', 'name', 'size', 'sha256', 'category', 'mimeType', 'modifiedAt', 'objectKey', 'callId'],
  ArtifactRemoved: ['path', 'callId'],
  SandboxExpired: ['snapshotKey', 'sizeBytes', 'idleMs', 'skipped'],
  SandboxRestored: ['snapshotKey', 'durationMs'],
  SandboxSnapshotFailed: ['reason', 'attempts', 'kept'],
  SecretsUnavailable: ['names', 'reason'],
  McpServerUnavailable: ['server', 'reason'],
  ArtifactLinksChanged: ['callId', 'links'],
  EgressRecorded: ['callId', 'host', 'port', 'allowed', 'reason', 'bytesOut', 'bytesIn', 'durationMs'],
  TaskForked: ['taskId', 'eventId', 'autoExecute', 'resumes'],
  TurnResumed: ['turn', 'messageId'],
  TurnRolledBack: ['turn', 'fromEventId', 'toEventId', 'checkpoint', 'artifacts'],
} as const satisfies FieldList;

type Listed<T extends TaskEventType> = (typeof TASK_EVENT_FIELDS)[T][number];
type Unlisted = { [T in TaskEventType]: Exclude<keyof TaskEventData<T>, Listed<T>> }[TaskEventType];
/** Compile-time: fails to type-check when an event gains a field that is not listed above. */
export const EVERY_FIELD_LISTED: [Unlisted] extends [never] ? true : Unlisted = true;

/** The fields of the rule nested in ToolCallRequested / ToolCallDecided, checked the same way. */
export const APPROVAL_RULE_FIELDS = ['toolName', 'programs', 'program', 'path'] as const satisfies readonly (keyof ApprovalRule)[];
/** Compile-time: fails to type-check when ApprovalRule gains a field that is not listed above. */
export const EVERY_RULE_FIELD_LISTED: [Exclude<keyof ApprovalRule, (typeof APPROVAL_RULE_FIELDS)[number]>] extends [never] ? true : never =
  true;

/** The fields of the sealed secrets nested in TaskCreated, checked the same way. */
export const SEALED_SECRETS_FIELDS = ['version', 'keyId', 'wrappedKey', 'ciphertext'] as const satisfies readonly (keyof SealedSecrets)[];
/** Compile-time: fails to type-check when SealedSecrets gains a field that is not listed above. */
export const EVERY_SEALED_SECRETS_FIELD_LISTED: [Exclude<keyof SealedSecrets, (typeof SEALED_SECRETS_FIELDS)[number]>] extends [never]
  ? true
  : never = true;
