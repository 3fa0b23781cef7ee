import type { PendingApproval, TaskEvent } from '@app/task-domain';

// Which webhook messages a task's history makes due, and what each says (docs/api.md "Webhooks").
// Pure and deterministic: the same events give the same ids and bodies, so every dispatcher, and
// the same one after a restart, derives the same messages from the store.

export type WebhookMessageType = 'task.awaiting_approval' | 'task.completed' | 'task.failed' | 'task.cancelled';

export interface WebhookPayload {
  readonly type: WebhookMessageType;
  /** When the event that made the message due was recorded (ISO 8601). */
  readonly timestamp: string;
  readonly data: {
    readonly taskId: string;
    readonly status: 'awaiting_approval' | 'completed' | 'failed' | 'cancelled';
    readonly turn: number;
    readonly pendingApprovals?: readonly PendingApproval[];
    readonly error?: string;
  };
}

export interface WebhookMessageSpec {
  /** The `webhook-id`: the task and the revision of the event that made the message due. */
  readonly id: string;
  readonly url: string;
  /** Revision, in the task's stream, of the event that made the message due. */
  readonly triggerRevision: number;
  readonly payload: WebhookPayload;
}

export interface TaskEventAt {
  readonly event: TaskEvent;
  readonly revision: number;
  readonly recordedAt: string;
}

/** The `webhook-id` of the message that the task's event at `revision` made due. */
export const webhookMessageId = (taskId: string, revision: number): string => `wh_${taskId.replace(/^task_/, '')}_${revision}`;

/**
 * Every message the task's events (oldest first, from revision 1) make due, oldest first; none
 * for a task without a webhook URL. A model response that asks for approvals makes one
 * `task.awaiting_approval` listing all of its waiting calls (they are appended together); each
 * turn's end makes one `task.completed`, `task.failed` or `task.cancelled`.
 */
export function webhookMessagesOf(taskId: string, events: readonly TaskEventAt[]): WebhookMessageSpec[] {
  const created = events[0]?.event;
  if (created?.type !== 'TaskCreated' || created.data.webhookUrl === undefined) return [];
  return webhookMessagesAfter(taskId, created.data.webhookUrl, events.slice(1));
}

/**
 * The messages that a task's events after its TaskCreated (oldest first) make due, sent to `url`,
 * the task's webhook URL. Events that make no message may be left out: the result is the same.
 */
export function webhookMessagesAfter(taskId: string, url: string, events: readonly TaskEventAt[]): WebhookMessageSpec[] {
  const messages: WebhookMessageSpec[] = [];
  const approvalsByStep = new Map<string, PendingApproval[]>();
  const message = (revision: number, recordedAt: string, type: WebhookMessageType, data: WebhookPayload['data']) =>
    messages.push({
      id: webhookMessageId(taskId, revision),
      url,
      triggerRevision: revision,
      payload: { type, timestamp: recordedAt, data },
    });

  for (const { event, revision, recordedAt } of events) {
    switch (event.type) {
      case 'ToolCallRequested': {
        const d = event.data;
        if (d.status !== 'awaiting_approval') break;
        const call = { callId: d.callId, toolName: d.toolName, args: d.args, requestedAt: recordedAt };
        const step = `${d.turn}:${d.step}`;
        const listed = approvalsByStep.get(step);
        if (listed) {
          listed.push(call);
          break;
        }
        const pendingApprovals = [call];
        approvalsByStep.set(step, pendingApprovals);
        message(revision, recordedAt, 'task.awaiting_approval', { taskId, status: 'awaiting_approval', turn: d.turn, pendingApprovals });
        break;
      }
      case 'TurnCompleted':
        message(revision, recordedAt, 'task.completed', { taskId, status: 'completed', turn: event.data.turn });
        break;
      case 'TaskFailed':
        message(revision, recordedAt, 'task.failed', { taskId, status: 'failed', turn: event.data.turn, error: event.data.error });
        break;
      case 'TaskCancelled':
        message(revision, recordedAt, 'task.cancelled', {
          taskId,
          status: 'cancelled',
          turn: event.data.turn,
          // An interrupting follow-up's turn starts in the same append and ends with a message of its own.
          ...(event.data.reason ? { reason: event.data.reason } : {}),
        });
        break;
      case 'TaskForked':
        // What came before is a copy of the source's history: the source's own messages told of it,
        // and the fork's destination hears only of what the fork itself does.
        messages.length = 0;
        approvalsByStep.clear();
        break;
      default:
        break;
    }
  }
  return messages;
}

/** Whether `event` makes a message due in a task that has a webhook URL (the dispatcher's cheap first check). */
export function mayMakeWebhookDue(event: TaskEvent): boolean {
  switch (event.type) {
    case 'ToolCallRequested':
      return event.data.status === 'awaiting_approval';
    case 'TurnCompleted':
    case 'TaskFailed':
    case 'TaskCancelled':
    case 'TaskForked': // unmakes those of the copied history before it
      return true;
    default:
      return false;
  }
}
