import type { TaskEvent } from '../task.events';
import type { TaskView } from './task-view.projection';
import { projectTaskView } from './task-view.projection';
import { toPublicEvent } from './public-event.projection';

const at = (n: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, n)).toISOString();
const usage = { inputTokens: 2, outputTokens: 3, totalTokens: 5 };

function project(events: TaskEvent[], revisions = events.map((_, i) => i + 1)): TaskView | undefined {
  return events.reduce<TaskView | undefined>(
    (view, event, i) => projectTaskView(view, { event, revision: revisions[i], recordedAt: at(i) }),
    undefined,
  );
}

const history: TaskEvent[] = [
  {
    type: 'TaskCreated',
    data: {
      taskId: 't',
      tenantId: 'x',
      messageId: 'm1',
      text: 'hi',
      autoExecute: false,
      showInHistory: false,
      env: { A: '1' },
      secretNames: ['S'],
      files: [],
    },
  },
  { type: 'TurnStarted', data: { turn: 1, messageId: 'm1' } },
  { type: 'ModelResponded', data: { turn: 1, step: 1, model: 'm', finishReason: 'tool_calls', usage } },
  { type: 'ToolCallRequested', data: { turn: 1, step: 1, callId: 'c1', toolName: 'list_files', args: {}, status: 'awaiting_approval' } },
];

describe('task view projection', () => {
  it('lists a call awaiting approval with its request time and shows awaiting_approval', () => {
    const view = project(history)!;
    expect(view.status).toBe('awaiting_approval');
    expect(view.pendingApprovals).toEqual([{ callId: 'c1', toolName: 'list_files', args: {}, requestedAt: at(3) }]);
    expect(view.envKeys).toEqual(['A']);
    expect(JSON.stringify(view)).not.toContain('"1"');
  });

  it('drops the approval once decided and sums usage over model calls', () => {
    const view = project([
      ...history,
      { type: 'ToolCallDecided', data: { callId: 'c1', outcome: 'proceed_once', approved: true } },
      { type: 'ModelResponded', data: { turn: 1, step: 2, model: 'm', finishReason: 'stop', usage } },
    ])!;
    expect(view.pendingApprovals).toEqual([]);
    expect(view.status).toBe('running');
    expect(view.usage).toEqual({
      inputTokens: 4,
      outputTokens: 6,
      totalTokens: 10,
      cacheReadTokens: 0,
      cacheWriteTokens: 0,
      costUsd: null,
    });
  });

  it('sums prompt-cache reads and writes, counting them 0 in events recorded without them', () => {
    const cached = { inputTokens: 1000, outputTokens: 10, totalTokens: 1010, cacheReadTokens: 900, cacheWriteTokens: 50 };
    const view = project([
      ...history,
      { type: 'ModelResponded', data: { turn: 1, step: 2, model: 'm', finishReason: 'stop', usage: cached } },
    ])!;
    expect(view.usage).toEqual({
      inputTokens: 1002,
      outputTokens: 13,
      totalTokens: 1015,
      cacheReadTokens: 900,
      cacheWriteTokens: 50,
      costUsd: null,
    });
  });

  it("sums the calls' costUsd, and is null once any call had no price", () => {
    const responded = (step: number, costUsd: number | null): TaskEvent => ({
      type: 'ModelResponded',
      data: { turn: 1, step, model: 'm', finishReason: 'stop', usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2, costUsd } },
    });
    const created = history[0];
    expect(project([created, responded(1, 0.1), responded(2, 0.2)])!.usage.costUsd).toBe(0.3);
    expect(project([created, responded(1, 0.1), responded(2, null), responded(3, 0.2)])!.usage.costUsd).toBeNull();
  });

  it('ignores an event it has already applied (duplicate delivery)', () => {
    const once = project(history)!;
    const again = projectTaskView(once, { event: history[2], revision: 3, recordedAt: at(9) });
    expect(again).toBe(once);
  });

  it("shows the token budget in force: none, the create field, then a follow-up's", () => {
    expect(project(history)!.maxTokens).toBeUndefined();
    const created = { ...history[0], data: { ...history[0].data, maxTokens: 100 } } as TaskEvent;
    expect(project([created, ...history.slice(1)])!.maxTokens).toBe(100);
    const raised = project([
      created,
      ...history.slice(1, 3),
      { type: 'TaskFailed', data: { turn: 1, error: 'budget' } },
      { type: 'UserMessageAdded', data: { messageId: 'm2', text: 'more', queued: false, maxTokens: 400 } },
      { type: 'UserMessageAdded', data: { messageId: 'm3', text: 'again', queued: true } },
    ])!;
    expect(raised.maxTokens).toBe(400);
  });

  it('keeps the error of a failed turn until the next turn starts', () => {
    const failed = project([...history.slice(0, 2), { type: 'TaskFailed', data: { turn: 1, error: 'model down' } }])!;
    expect(failed).toMatchObject({ status: 'failed', error: 'model down' });
    const retried = project([
      ...history.slice(0, 2),
      { type: 'TaskFailed', data: { turn: 1, error: 'model down' } },
      { type: 'UserMessageAdded', data: { messageId: 'm2', text: 'again', queued: false } },
      { type: 'TurnStarted', data: { turn: 2, messageId: 'm2' } },
    ])!;
    expect(retried.status).toBe('running');
    expect(retried.error).toBeUndefined();
    expect(retried.turnStartEventId).toBe(4); // the follow-up message that started turn 2
  });
});

describe('sealed secrets', () => {
  const sealedSecrets = { version: 1, keyId: '0123456789abcdef', wrappedKey: 'd3JhcHBlZC1rZXk=', ciphertext: 'Y2lwaGVydGV4dA==' };
  const created: TaskEvent = { ...history[0], data: { ...(history[0].data as object), sealedSecrets } } as TaskEvent;

  it('never reach the task view or the public stream, only the secret names do', () => {
    const view = project([created])!;
    expect(view.secretNames).toEqual(['S']);
    for (const text of [JSON.stringify(view), JSON.stringify(toPublicEvent(created))]) {
      for (const field of ['sealedSecrets', sealedSecrets.keyId, sealedSecrets.wrappedKey, sealedSecrets.ciphertext])
        expect(text).not.toContain(field);
    }
  });

  it('a secrets notice ends up in notices, and its failed turn in error', () => {
    const reason = 'Secrets S cannot be opened: wrong key.';
    const view = project([
      ...history.slice(0, 2),
      { type: 'SecretsUnavailable', data: { names: ['S'], reason } },
      { type: 'TaskFailed', data: { turn: 1, error: reason } },
    ])!;
    expect(view).toMatchObject({ status: 'failed', error: reason, notices: [reason] });
    expect(toPublicEvent({ type: 'SecretsUnavailable', data: { names: ['S'], reason } })).toEqual({
      kind: 'notice',
      data: { code: 'SECRETS_UNAVAILABLE', names: ['S'], message: reason },
    });
  });
});

describe('a snapshot that keeps failing', () => {
  const failed: TaskEvent = {
    type: 'SandboxSnapshotFailed',
    data: { reason: 'snapshot took longer than 100 ms (SANDBOX_SNAPSHOT_TIMEOUT_MS)', attempts: 4, kept: 'workspace' },
  };

  it('leaves the task view active: the workspace is still up', () => {
    const view = project([...history, failed])!;
    expect(view).toMatchObject({ sandbox: 'active', status: 'awaiting_approval', lastEventId: 5, notices: [] });
  });

  it('is a `sandbox` event on the stream, saying why, after how many attempts, and what was kept', () => {
    expect(toPublicEvent(failed)).toEqual({
      kind: 'sandbox',
      data: {
        status: 'snapshot_failed',
        reason: 'snapshot took longer than 100 ms (SANDBOX_SNAPSHOT_TIMEOUT_MS)',
        attempts: 4,
        kept: 'workspace',
      },
    });
  });
});

describe('public events', () => {
  it('maps tool calls, results and the end of a turn to the contract kinds and payloads', () => {
    expect(toPublicEvent(history[3])).toEqual({
      kind: 'tool_call',
      data: { callId: 'c1', toolName: 'list_files', status: 'awaiting_approval', args: {} },
    });
    expect(
      toPublicEvent({
        type: 'ToolCallFinished',
        data: { callId: 'c1', toolName: 'list_files', status: 'success', output: 'a', durationMs: 3 },
      }),
    ).toEqual({
      kind: 'tool_result',
      data: { callId: 'c1', toolName: 'list_files', status: 'success', output: 'a', durationMs: 3 },
    });
    expect(toPublicEvent({ type: 'AssistantTextProduced', data: { turn: 1, step: 1, text: 'hello' } })).toEqual({
      kind: 'content',
      data: { text: 'hello' },
    });
    expect(toPublicEvent({ type: 'TaskFailed', data: { turn: 1, error: 'x' } })).toEqual({
      kind: 'done',
      data: { status: 'failed', error: 'x', turn: 1 },
    });
    expect(toPublicEvent({ type: 'TurnCompleted', data: { turn: 2 } })).toEqual({ kind: 'done', data: { status: 'completed', turn: 2 } });
    expect(toPublicEvent({ type: 'TaskCancelled', data: { turn: 2, droppedMessageIds: [] } }).data).toEqual({
      status: 'cancelled',
      turn: 2,
    });
  });
});
