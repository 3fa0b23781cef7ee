import type { RecordedTurnUsage, TaskEvent, TokenUsage } from '../task.events';
import { withCost } from '../task.events';

// How each stored event appears on the public stream (docs/api.md "Streaming events (SSE)"): every stored event
// is exactly one SSE event, so the stream's ids are the stream revisions 1, 2, 3, … with no gap.

export interface PublicEvent {
  readonly kind: string;
  readonly data: Record<string, unknown>;
}

export const DONE_KIND = 'done';

export function toPublicEvent(event: TaskEvent): PublicEvent {
  switch (event.type) {
    case 'TaskCreated':
      return { kind: 'message', data: { messageId: event.data.messageId, text: event.data.text, queued: true } };
    case 'UserMessageAdded':
      return { kind: 'message', data: { ...event.data } };
    case 'TurnStarted':
      return { kind: 'status', data: { status: 'running', turn: event.data.turn, messageId: event.data.messageId } };
    case 'ModelResponded':
      return {
        kind: 'usage',
        // Model calls recorded before the cache counts existed have none: 0, as for a provider that
        // reports none; before cost was counted, no cost: null, as for a model without a price.
        data: {
          cacheReadTokens: 0,
          cacheWriteTokens: 0,
          costUsd: null,
          ...event.data.usage,
          turn: event.data.turn,
          step: event.data.step,
          model: event.data.model,
        },
      };
    case 'AssistantTextProduced':
      return { kind: 'content', data: { text: event.data.text } };
    case 'ToolCallRequested': {
      const { callId, toolName, status, args, approvedByRule } = event.data;
      return { kind: 'tool_call', data: { callId, toolName, status, args, ...(approvedByRule ? { approvedByRule } : {}) } };
    }
    case 'ToolCallDecided':
      return { kind: 'tool_decision', data: { ...event.data } };
    case 'ToolCallApprovalExpired':
      return {
        kind: 'tool_decision',
        data: { callId: event.data.callId, outcome: 'expired', approved: false, timeoutMs: event.data.timeoutMs },
      };
    case 'ToolCallStarted':
      return { kind: 'tool_started', data: { ...event.data } };
    case 'ToolCallFinished': {
      const { checkpoint: _internal, ...result } = event.data;
      return { kind: 'tool_result', data: { ...result } };
    }
    case 'TurnCompleted':
      return { kind: DONE_KIND, data: { status: 'completed', turn: event.data.turn, ...turnUsage(event.data.usage) } };
    case 'TaskFailed':
      return {
        kind: DONE_KIND,
        data: { status: 'failed', error: event.data.error, turn: event.data.turn, ...turnUsage(event.data.usage) },
      };
    case 'TaskCancelled':
      return {
        kind: DONE_KIND,
        data: {
          status: 'cancelled',
          turn: event.data.turn,
          ...(event.data.reason ? { reason: event.data.reason } : {}),
          ...turnUsage(event.data.usage),
        },
      };
    case 'ArtifactRecorded': {
      const { objectKey: _internal, ...artifact } = event.data;
      return { kind: 'artifact', data: { ...artifact, status: 'recorded' } };
    }
    case 'ArtifactRemoved':
      return { kind: 'artifact', data: { ...event.data, status: 'removed' } };
    case 'SandboxExpired':
      return {
        kind: 'sandbox',
        data: {
          status: 'expired',
          sizeBytes: event.data.sizeBytes,
          idleMs: event.data.idleMs,
          ...(event.data.skipped ? { skipped: event.data.skipped } : {}),
        },
      };
    case 'SandboxRestored':
      return { kind: 'sandbox', data: { status: 'restored', durationMs: event.data.durationMs } };
    case 'SandboxSnapshotFailed':
      return {
        kind: 'sandbox',
        data: { status: 'snapshot_failed', reason: event.data.reason, attempts: event.data.attempts, kept: event.data.kept },
      };
    case 'SecretsUnavailable':
      return { kind: 'notice', data: { code: 'SECRETS_UNAVAILABLE', names: event.data.names, message: event.data.reason } };
    case 'ArtifactLinksChanged':
      return { kind: 'artifact_links', data: { callId: event.data.callId, links: event.data.links } };
    case 'McpServerUnavailable':
      return { kind: 'notice', data: { code: 'MCP_SERVER_UNAVAILABLE', server: event.data.server, message: mcpNotice(event.data) } };
    case 'EgressRecorded':
      return { kind: 'egress', data: { ...event.data } };
    case 'TurnResumed':
      // For the caller, as when it started: the turn runs (again).
      return { kind: 'status', data: { status: 'running', turn: event.data.turn, messageId: event.data.messageId } };
    case 'TurnRolledBack':
      return { kind: 'rolled_back', data: { fromEventId: event.data.fromEventId, toEventId: event.data.toEventId } };
    case 'TaskForked':
      // The fork's autoExecute is the task's own (GET shows it), not part of where it came from.
      return { kind: 'forked', data: { taskId: event.data.taskId, eventId: event.data.eventId } };
    default: {
      const _exhaustive: never = event;
      return _exhaustive;
    }
  }
}

/** What a caller reads about an MCP server its task could not use. */
export const mcpNotice = ({ server, reason }: { readonly server: string; readonly reason: string }): string =>
  `MCP server "${server}" is unavailable, so its tools are left out: ${reason}`;

/** The turn's usage on `done`; turns that ended before it was recorded have none to show, before cost was counted no cost. */
function turnUsage(usage: RecordedTurnUsage | undefined): { usage?: TokenUsage } {
  return usage ? { usage: withCost(usage) } : {};
}
