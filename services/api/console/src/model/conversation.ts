import type { ArtifactFile, TaskStreamEvent } from '@agentic-task-service/client';
import type { Egress } from './egress';

// The task page's view of a task, folded from its event stream (event 1 onwards). Pure: the
// same events give the same view, and an event seen twice (a replay overlapping what was already
// shown) changes nothing, so a reconnect or reload can never duplicate a line.

type DataOf<T extends TaskStreamEvent['type']> = Extract<TaskStreamEvent, { type: T }>['data'];

export interface ToolCallItem {
  readonly kind: 'tool';
  readonly eventId: number;
  readonly callId: string;
  readonly toolName: string;
  readonly args: Record<string, unknown>;
  /** awaiting_approval until decided; approved when it ran without asking. */
  readonly requested: DataOf<'tool_call'>['status'];
  readonly approvedByRule?: Record<string, unknown>;
  readonly decision?: DataOf<'tool_decision'>;
  readonly started: boolean;
  /** The connections its command made through the egress proxy, in the order they ended (they come before the result). */
  readonly egress: readonly Egress[];
  readonly result?: DataOf<'tool_result'>;
  /** The id of the `tool_result` event: the step to list files at or fork after. */
  readonly resultEventId?: number;
}

export type ConversationItem =
  | { readonly kind: 'user'; readonly eventId: number; readonly text: string; readonly queued: boolean }
  | { readonly kind: 'text'; readonly eventId: number; readonly text: string }
  | ToolCallItem
  | { readonly kind: 'turn'; readonly eventId: number; readonly turn: number }
  | { readonly kind: 'done'; readonly eventId: number; readonly status: DataOf<'done'>['status']; readonly error?: string }
  | { readonly kind: 'notice'; readonly eventId: number; readonly text: string }
  | { readonly kind: 'forked'; readonly eventId: number; readonly from: DataOf<'forked'> };

export interface Conversation {
  /** The id of the last event folded in: where a stream resumes (`after`). */
  readonly lastEventId: number;
  readonly items: readonly ConversationItem[];
  readonly usage: {
    readonly inputTokens: number;
    readonly outputTokens: number;
    readonly totalTokens: number;
    /** USD of the calls; null once one had no price (docs/api.md "The Task resource"). */
    readonly costUsd: number | null;
  };
  /** Artifacts recorded by the events, by path (removed ones dropped). */
  readonly artifacts: ReadonlyMap<string, Pick<ArtifactFile, 'path' | 'name' | 'size' | 'mimeType'>>;
}

export const EMPTY_CONVERSATION: Conversation = {
  lastEventId: 0,
  items: [],
  usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0, costUsd: 0 },
  artifacts: new Map(),
};

/** Folds one event in; events at or before `lastEventId` were already folded and are ignored. */
export function foldEvent(state: Conversation, event: TaskStreamEvent): Conversation {
  if (event.id <= state.lastEventId) return state;
  const next = { ...state, lastEventId: event.id };
  const push = (item: ConversationItem): Conversation => ({ ...next, items: [...state.items, item] });
  switch (event.type) {
    case 'message':
      return push({ kind: 'user', eventId: event.id, text: event.data.text, queued: event.data.queued });
    case 'status':
      return push({ kind: 'turn', eventId: event.id, turn: event.data.turn });
    case 'content': {
      const last = state.items.at(-1);
      // Streamed text arrives in pieces: they join the text block they continue.
      if (last?.kind === 'text') return { ...next, items: [...state.items.slice(0, -1), { ...last, text: last.text + event.data.text }] };
      return push({ kind: 'text', eventId: event.id, text: event.data.text });
    }
    case 'tool_call':
      return push({
        kind: 'tool',
        eventId: event.id,
        callId: event.data.callId,
        toolName: event.data.toolName,
        args: event.data.args,
        requested: event.data.status,
        approvedByRule: event.data.approvedByRule,
        started: false,
        egress: [],
      });
    case 'tool_decision':
      return updateTool(next, event.data.callId, () => ({ decision: event.data }));
    case 'tool_started':
      return updateTool(next, event.data.callId, () => ({ started: true }));
    case 'egress':
      return updateTool(next, event.data.callId, (item) => ({ egress: [...item.egress, event.data] }));
    case 'tool_result':
      return updateTool(next, event.data.callId, () => ({ result: event.data, resultEventId: event.id }));
    case 'usage': {
      const { inputTokens, outputTokens, totalTokens, costUsd } = state.usage;
      return {
        ...next,
        usage: {
          inputTokens: inputTokens + event.data.inputTokens,
          outputTokens: outputTokens + event.data.outputTokens,
          totalTokens: totalTokens + event.data.totalTokens,
          costUsd: costUsd === null || event.data.costUsd === null ? null : costUsd + event.data.costUsd,
        },
      };
    }
    case 'artifact': {
      const artifacts = new Map(state.artifacts);
      if (event.data.status === 'removed') artifacts.delete(event.data.path);
      else artifacts.set(event.data.path, event.data);
      return { ...next, artifacts };
    }
    case 'done':
      return push({ kind: 'done', eventId: event.id, status: event.data.status, error: event.data.error });
    case 'notice':
      return push({ kind: 'notice', eventId: event.id, text: event.data.message });
    case 'forked':
      return push({ kind: 'forked', eventId: event.id, from: event.data });
    case 'rolled_back':
      return push({
        kind: 'notice',
        eventId: event.id,
        text: `Turn undone: events ${event.data.fromEventId} to ${event.data.toEventId} are left out of the agent's context, and the workspace is as it was before them.`,
      });
    case 'sandbox':
      return push({ kind: 'notice', eventId: event.id, text: sandboxNotice(event.data) });
    default:
      return next;
  }
}

function sandboxNotice(data: DataOf<'sandbox'>): string {
  switch (data.status) {
    case 'expired':
      return 'The workspace expired while idle (kept, restored on the next turn).';
    case 'restored':
      return 'The workspace was restored.';
    case 'snapshot_failed':
      return `The idle workspace could not be archived (${data.attempts} attempts: ${data.reason}); it stays up as it is.`;
  }
}

function updateTool(state: Conversation, callId: string, change: (item: ToolCallItem) => Partial<ToolCallItem>): Conversation {
  return {
    ...state,
    items: state.items.map((item) => (item.kind === 'tool' && item.callId === callId ? { ...item, ...change(item) } : item)),
  };
}

/** A call the user still has to decide. */
export const isPending = (item: ConversationItem): item is ToolCallItem =>
  item.kind === 'tool' && item.requested === 'awaiting_approval' && !item.decision && !item.result;
