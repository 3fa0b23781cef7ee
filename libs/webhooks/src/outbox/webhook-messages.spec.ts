import type { TaskCreated, TaskEvent } from '@app/task-domain';
import type { TaskEventAt } from './webhook-messages';
import { webhookMessageId, webhookMessagesOf } from './webhook-messages';

const TASK = 'task_0123456789abcdef0123456789abcdef';
const created = (webhookUrl?: string): TaskCreated => ({
  type: 'TaskCreated',
  data: {
    taskId: TASK,
    tenantId: 't',
    messageId: 'msg_1',
    text: 'hi',
    autoExecute: false,
    showInHistory: true,
    env: {},
    secretNames: [],
    files: [],
    ...(webhookUrl ? { webhookUrl } : {}),
  },
});
const at = (events: TaskEvent[]): TaskEventAt[] =>
  events.map((event, i) => ({ event, revision: i + 1, recordedAt: `2026-11-25T00:00:0${i}.000Z` }));
const asks = (callId: string, step = 1): TaskEvent => ({
  type: 'ToolCallRequested',
  data: { turn: 1, step, callId, toolName: 'shell', args: { command: 'ls' }, status: 'awaiting_approval' },
});

describe('webhookMessagesOf', () => {
  it('makes no message for a task without a webhook URL', () => {
    expect(webhookMessagesOf(TASK, at([created(), { type: 'TurnCompleted', data: { turn: 1 } }]))).toEqual([]);
  });

  it('makes one awaiting_approval message per model response, listing every call that waits', () => {
    const events = at([
      created('https://hooks.example.com/x'),
      { type: 'TurnStarted', data: { turn: 1, messageId: 'msg_1' } },
      asks('call_a'),
      asks('call_b'),
      { type: 'ToolCallDecided', data: { callId: 'call_a', outcome: 'proceed_once', approved: true } },
      asks('call_c', 2),
    ]);
    const messages = webhookMessagesOf(TASK, events);
    expect(messages.map((m) => [m.id, m.payload.type, m.triggerRevision])).toEqual([
      [webhookMessageId(TASK, 3), 'task.awaiting_approval', 3],
      [webhookMessageId(TASK, 6), 'task.awaiting_approval', 6],
    ]);
    expect(messages[0].payload).toEqual({
      type: 'task.awaiting_approval',
      timestamp: '2026-11-25T00:00:02.000Z',
      data: {
        taskId: TASK,
        status: 'awaiting_approval',
        turn: 1,
        pendingApprovals: [
          { callId: 'call_a', toolName: 'shell', args: { command: 'ls' }, requestedAt: '2026-11-25T00:00:02.000Z' },
          { callId: 'call_b', toolName: 'shell', args: { command: 'ls' }, requestedAt: '2026-11-25T00:00:03.000Z' },
        ],
      },
    });
    expect(messages[0].url).toBe('https://hooks.example.com/x');
  });

  it('makes one message per turn end: completed, failed with its error, cancelled', () => {
    const events = at([
      created('https://hooks.example.com/x'),
      { type: 'TurnCompleted', data: { turn: 1 } },
      { type: 'TaskFailed', data: { turn: 2, error: 'boom' } },
      { type: 'TaskCancelled', data: { turn: 3, droppedMessageIds: [] } },
    ]);
    expect(webhookMessagesOf(TASK, events).map((m) => m.payload.data)).toEqual([
      { taskId: TASK, status: 'completed', turn: 1 },
      { taskId: TASK, status: 'failed', turn: 2, error: 'boom' },
      { taskId: TASK, status: 'cancelled', turn: 3 },
    ]);
  });

  it('derives the same ids and bodies from the same events (a restart re-derives them)', () => {
    const events = at([created('https://hooks.example.com/x'), { type: 'TurnCompleted', data: { turn: 1 } }]);
    expect(webhookMessagesOf(TASK, events)).toEqual(webhookMessagesOf(TASK, events));
    expect(webhookMessageId(TASK, 2)).toBe('wh_0123456789abcdef0123456789abcdef_2');
  });

  it("makes none for a fork's copy of its source's history, only for what the fork does after it", () => {
    const url = 'https://hooks.example.com/x';
    const events = at([
      created(url),
      { type: 'TurnStarted', data: { turn: 1, messageId: 'msg_1' } },
      asks('call_a'),
      { type: 'ToolCallDecided', data: { callId: 'call_a', outcome: 'proceed_once', approved: true } },
      { type: 'TurnCompleted', data: { turn: 1 } },
      { type: 'TaskForked', data: { taskId: 'task_source', eventId: 5, autoExecute: false } },
      { type: 'UserMessageAdded', data: { messageId: 'msg_2', text: 'again', queued: false } },
      { type: 'TurnStarted', data: { turn: 2, messageId: 'msg_2' } },
      { type: 'TurnCompleted', data: { turn: 2 } },
    ]);
    expect(webhookMessagesOf(TASK, events).map((m) => [m.triggerRevision, m.payload.type])).toEqual([[9, 'task.completed']]);
  });
});
