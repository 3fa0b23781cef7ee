import type { TaskEvent } from '@app/task-domain';
import { buildConversation } from './conversation';

const usage = { inputTokens: 1, outputTokens: 1, totalTokens: 2 };

describe('buildConversation', () => {
  it('leaves a rolled-back turn out, but keeps the text of a follow-up sent while it ran', () => {
    const events: TaskEvent[] = [
      {
        type: 'TaskCreated',
        data: {
          taskId: 't',
          tenantId: 'ten',
          messageId: 'm1',
          text: 'first',
          autoExecute: true,
          showInHistory: true,
          env: {},
          secretNames: [],
          files: [],
        },
      },
      { type: 'TurnStarted', data: { turn: 1, messageId: 'm1' } }, // 2
      { type: 'ModelResponded', data: { turn: 1, step: 1, model: 'x', finishReason: 'tool_calls', usage } },
      { type: 'ToolCallRequested', data: { turn: 1, step: 1, callId: 'c1', toolName: 'shell', args: {}, status: 'approved' } },
      { type: 'UserMessageAdded', data: { messageId: 'm2', text: 'queued meanwhile', queued: true } }, // 5
      { type: 'ToolCallFinished', data: { callId: 'c1', toolName: 'shell', status: 'cancelled', output: 'x', durationMs: 0 } },
      { type: 'TaskCancelled', data: { turn: 1, droppedMessageIds: [], reason: 'interrupted' } }, // 7
      { type: 'TurnRolledBack', data: { turn: 1, fromEventId: 2, toEventId: 7, artifacts: [] } },
      { type: 'UserMessageAdded', data: { messageId: 'm3', text: 'instead', queued: false } },
      { type: 'TurnStarted', data: { turn: 2, messageId: 'm3' } },
      { type: 'ModelResponded', data: { turn: 2, step: 1, model: 'x', finishReason: 'stop', usage } },
      { type: 'AssistantTextProduced', data: { turn: 2, step: 1, text: 'done' } },
      { type: 'TurnCompleted', data: { turn: 2 } },
      { type: 'TurnStarted', data: { turn: 3, messageId: 'm2' } },
    ];
    const messages = buildConversation(events);
    expect(messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'user']);
    expect(messages.slice(1)).toEqual([
      { role: 'user', content: 'instead' },
      { role: 'assistant', content: 'done' },
      { role: 'user', content: 'queued meanwhile' },
    ]);
  });
});
