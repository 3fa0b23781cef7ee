import type { TaskEvent, TaskState } from '@app/task-domain';
import { evolve, initialTaskState } from '@app/task-domain';
import { costBudgetError, nextAction, tokenBudgetError } from './next-action';

const fold = (events: TaskEvent[]): TaskState => events.reduce(evolve, initialTaskState());
const created = (maxTokens?: number): TaskEvent => ({
  type: 'TaskCreated',
  data: {
    taskId: 't',
    tenantId: 'ten',
    messageId: 'm1',
    text: 'hi',
    autoExecute: true,
    showInHistory: true,
    env: {},
    secretNames: [],
    files: [],
    ...(maxTokens ? { maxTokens } : {}),
  },
});
const started = (turn: number, messageId: string): TaskEvent => ({ type: 'TurnStarted', data: { turn, messageId } });
const responded = (turn: number, step: number, totalTokens: number): TaskEvent => ({
  type: 'ModelResponded',
  data: { turn, step, model: 'm', finishReason: 'tool_calls', usage: { inputTokens: totalTokens, outputTokens: 0, totalTokens } },
});
const call = (turn: number, step: number, callId: string): TaskEvent[] => [
  { type: 'ToolCallRequested', data: { turn, step, callId, toolName: 'list_files', args: {}, status: 'approved' } },
  { type: 'ToolCallStarted', data: { callId, toolName: 'list_files' } },
  { type: 'ToolCallFinished', data: { callId, toolName: 'list_files', status: 'success', output: '', durationMs: 1 } },
];
const none = new Set<string>();

describe('nextAction and the token budget (maxTokens)', () => {
  it('calls the model while the task has spent less than its budget', () => {
    expect(nextAction(fold([created(100), started(1, 'm1'), responded(1, 1, 99), ...call(1, 1, 'c1')]), none)).toEqual({
      kind: 'call_model',
      turn: 1,
      step: 2,
    });
  });

  it('fails the turn instead of calling the model once the budget is spent', () => {
    const state = fold([created(100), started(1, 'm1'), responded(1, 1, 100), ...call(1, 1, 'c1')]);
    expect(nextAction(state, none)).toEqual({ kind: 'budget_reached', turn: 1, error: tokenBudgetError(100, 100) });
    expect(tokenBudgetError(100, 100)).toMatch(
      /Token budget reached: the task has used 100 of its 100 tokens \(maxTokens\).*higher maxTokens/,
    );
  });

  it('still runs the calls the last response asked for: the check comes before model calls only', () => {
    const state = fold([created(100), started(1, 'm1'), responded(1, 1, 150), call(1, 1, 'c1')[0]]);
    expect(nextAction(state, none)).toEqual({ kind: 'execute_tool', callId: 'c1' });
  });

  it('fails a turn that starts over budget before its first model call', () => {
    const spent = [
      created(100),
      started(1, 'm1'),
      responded(1, 1, 120),
      { type: 'TaskFailed', data: { turn: 1, error: 'x' } } as TaskEvent,
    ];
    const followUp: TaskEvent = { type: 'UserMessageAdded', data: { messageId: 'm2', text: 'go on', queued: false } };
    expect(nextAction(fold([...spent, followUp, started(2, 'm2')]), none)).toMatchObject({ kind: 'budget_reached', turn: 2 });
  });

  it('lets a follow-up that raises the budget go on', () => {
    const spent = [
      created(100),
      started(1, 'm1'),
      responded(1, 1, 120),
      { type: 'TaskFailed', data: { turn: 1, error: 'x' } } as TaskEvent,
    ];
    const raised: TaskEvent = { type: 'UserMessageAdded', data: { messageId: 'm2', text: 'go on', queued: false, maxTokens: 500 } };
    expect(nextAction(fold([...spent, raised, started(2, 'm2')]), none)).toEqual({ kind: 'call_model', turn: 2, step: 1 });
  });

  it('has no budget when the task has none', () => {
    expect(nextAction(fold([created(), started(1, 'm1'), responded(1, 1, 10 ** 9), ...call(1, 1, 'c1')]), none)).toEqual({
      kind: 'call_model',
      turn: 1,
      step: 2,
    });
  });
});

describe('nextAction and the cost budget (maxCostUsd)', () => {
  const createdWithCost = (maxCostUsd: number): TaskEvent => {
    const event = created();
    return { ...event, data: { ...event.data, maxCostUsd } } as TaskEvent;
  };
  const costing = (turn: number, step: number, costUsd: number | null): TaskEvent => ({
    type: 'ModelResponded',
    data: { turn, step, model: 'm', finishReason: 'tool_calls', usage: { inputTokens: 10, outputTokens: 0, totalTokens: 10, costUsd } },
  });

  it('calls the model while the priced calls have cost less than the budget', () => {
    const state = fold([createdWithCost(0.5), started(1, 'm1'), costing(1, 1, 0.49), ...call(1, 1, 'c1')]);
    expect(nextAction(state, none)).toEqual({
      kind: 'call_model',
      turn: 1,
      step: 2,
    });
  });

  it('fails the turn instead of calling the model once the calls have cost the budget, naming it', () => {
    const state = fold([
      createdWithCost(0.3),
      started(1, 'm1'),
      costing(1, 1, 0.1),
      ...call(1, 1, 'c1'),
      costing(1, 2, 0.2),
      ...call(1, 2, 'c2'),
    ]);
    expect(nextAction(state, none)).toEqual({ kind: 'budget_reached', turn: 1, error: costBudgetError(0.3, 0.3) });
    expect(costBudgetError(0.3, 0.3)).toMatch(/Cost budget reached: .* 0\.3 USD of its 0\.3 USD \(maxCostUsd\).*higher maxCostUsd/);
  });

  it('counts only priced calls against the budget: a call without a price adds nothing', () => {
    const state = fold([createdWithCost(0.3), started(1, 'm1'), costing(1, 1, null), ...call(1, 1, 'c1')]);
    expect(nextAction(state, none)).toEqual({ kind: 'call_model', turn: 1, step: 2 });
  });

  it('lets a follow-up that raises the cost budget go on', () => {
    const spent = [
      createdWithCost(0.1),
      started(1, 'm1'),
      costing(1, 1, 0.1),
      { type: 'TaskFailed', data: { turn: 1, error: 'x' } } as TaskEvent,
    ];
    const raised: TaskEvent = { type: 'UserMessageAdded', data: { messageId: 'm2', text: 'go on', queued: false, maxCostUsd: 1 } };
    expect(nextAction(fold([...spent, raised, started(2, 'm2')]), none)).toEqual({ kind: 'call_model', turn: 2, step: 1 });
  });
});

describe('nextAction for a fork whose running turn waits for admission', () => {
  const forked: TaskEvent = {
    type: 'TaskForked',
    data: { taskId: 'source', eventId: 6, autoExecute: true, resumes: { turn: 1, messageId: 'm1' } },
  };
  const requested: TaskEvent = {
    type: 'ToolCallRequested',
    data: { turn: 1, step: 1, callId: 'c2', toolName: 'list_files', args: {}, status: 'approved' },
  };
  const history = [created(), started(1, 'm1'), responded(1, 1, 1), requested, ...call(1, 1, 'c1'), forked];

  it('asks to resume the turn of its message, not to start one nor to run the waiting call', () => {
    expect(nextAction(fold(history), none)).toEqual({ kind: 'resume_turn', messageId: 'm1' });
  });

  it('runs the waiting call once resumed', () => {
    const resumed: TaskEvent = { type: 'TurnResumed', data: { turn: 1, messageId: 'm1' } };
    expect(nextAction(fold([...history, resumed]), none)).toEqual({ kind: 'execute_tool', callId: 'c2' });
  });
});
