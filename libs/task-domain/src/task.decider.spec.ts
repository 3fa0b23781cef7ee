import { NotFoundError, ValidationError } from '@app/common';
import { DeciderSpecification } from '@app/common/testing/decider-spec';
import type { TaskCommand } from './task.decider';
import { DECLINED_OUTPUT, decide, expiredOutput } from './task.decider';
import {
  CallNotAwaitingApprovalError,
  CallNotNextApprovedError,
  CallNotRunningError,
  MessageNotNextError,
  NoTurnWaitingError,
  StaleModelResponseError,
  TaskAlreadyExistsError,
  TaskConflictError,
  TurnDecidedError,
  TurnNotRunningError,
  TurnRunningError,
} from './task.errors';
import type { TaskCreated, TaskEvent } from './task.events';
import type { TaskState } from './task.state';
import { evolve, initialTaskState } from './task.state';

const spec = DeciderSpecification.for<TaskState, TaskCommand, TaskEvent>({ decide, evolve, initialState: initialTaskState });

const usage = { inputTokens: 1, outputTokens: 2, totalTokens: 3 };
/** The turn's usage the ends of a turn record: one `usage` response, or none. Recorded without a cost (no price): the turn's cost is null. */
const spent = { ...usage, cacheReadTokens: 0, cacheWriteTokens: 0, costUsd: null };
/** What a turn of one such model call spent, as a turn's end records it. */
const turnUsage = spent;
const nothingSpent = { inputTokens: 0, outputTokens: 0, totalTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, costUsd: 0 };
const created = (autoExecute = true): TaskCreated => ({
  type: 'TaskCreated',
  data: {
    taskId: 't',
    tenantId: 'ten',
    messageId: 'm1',
    text: 'hello',
    autoExecute,
    showInHistory: true,
    env: {},
    secretNames: [],
    files: [],
  },
});
const turnStarted = (turn = 1, messageId = 'm1'): TaskEvent => ({ type: 'TurnStarted', data: { turn, messageId } });
const responded = (step = 1, turn = 1): TaskEvent => ({
  type: 'ModelResponded',
  data: { turn, step, model: 'x', finishReason: 'stop', usage },
});
const requested = (
  callId: string,
  status: 'approved' | 'awaiting_approval',
  toolName = 'list_files',
  args: Record<string, unknown> = {},
): TaskEvent => ({
  type: 'ToolCallRequested',
  data: { turn: 1, step: 1, callId, toolName, args, status },
});
const response = (toolCalls: { callId: string; toolName: string; args: Record<string, unknown> }[], text = '', step = 1): TaskCommand => ({
  type: 'RecordModelResponse',
  data: { turn: 1, step, text, toolCalls, usage, model: 'x', finishReason: 'stop' },
});
const running = [created(), turnStarted()];
const waiting = (toolName = 'shell', args: Record<string, unknown> = { command: 'ls -la' }) => [
  created(false),
  turnStarted(),
  responded(),
  requested('c1', 'awaiting_approval', toolName, args),
];

describe('task decider', () => {
  describe('creating and starting', () => {
    it('creates a pending task', () => spec.given([]).when({ type: 'CreateTask', data: created().data }).then([created()]));
    it('refuses to create a task whose message is only whitespace, as it refuses such a follow-up', () =>
      spec
        .given([])
        .when({ type: 'CreateTask', data: { ...created().data, text: ' \t\n ' } })
        .thenThrows(ValidationError, /message must be a non-empty string/));
    it('refuses to create a task twice', () =>
      spec.given([created()]).when({ type: 'CreateTask', data: created().data }).thenThrows(TaskAlreadyExistsError));
    it('starts the first turn with the first message', () =>
      spec.given([created()]).when({ type: 'StartTurn', data: {} }).then([turnStarted()]));
    it('refuses to start a turn while one runs', () =>
      spec.given(running).when({ type: 'StartTurn', data: {} }).thenThrows(NoTurnWaitingError));
    it('refuses to start the turn of a message that is not first in line', () =>
      spec
        .given([created()])
        .when({ type: 'StartTurn', data: { messageId: 'm9' } })
        .thenThrows(MessageNotNextError, /message m9 is not the next/));
    it('answers NOT_FOUND for a task that does not exist', () =>
      spec.given([]).when({ type: 'CancelTask', data: {} }).thenThrows(NotFoundError));
  });

  describe('follow-ups', () => {
    const completed = [...running, responded(), { type: 'TurnCompleted', data: { turn: 1 } } as TaskEvent];
    it('starts the next turn at once on a finished task', () =>
      spec
        .given(completed)
        .when({ type: 'AddUserMessage', data: { messageId: 'm2', text: 'more' } })
        .then([{ type: 'UserMessageAdded', data: { messageId: 'm2', text: 'more', queued: false } }, turnStarted(2, 'm2')]));
    it('queues a follow-up sent while a turn runs', () =>
      spec
        .given(running)
        .when({ type: 'AddUserMessage', data: { messageId: 'm2', text: 'more' } })
        .then([{ type: 'UserMessageAdded', data: { messageId: 'm2', text: 'more', queued: true } }]));
    it('refuses an empty follow-up', () =>
      spec
        .given(completed)
        .when({ type: 'AddUserMessage', data: { messageId: 'm2', text: '  ' } })
        .thenThrows(ValidationError));
    it('starts the queued follow-up in the same append that ends the turn', () =>
      spec
        .given([...running, { type: 'UserMessageAdded', data: { messageId: 'm2', text: 'next', queued: true } }])
        .when(response([], 'done'))
        .then([
          responded(),
          { type: 'AssistantTextProduced', data: { turn: 1, step: 1, text: 'done' } },
          { type: 'TurnCompleted', data: { turn: 1, usage: spent } },
          turnStarted(2, 'm2'),
        ]));
  });

  describe('turns waiting for admission (MAX_RUNNING_TASKS_PER_TENANT)', () => {
    const queuedSpec = DeciderSpecification.for<TaskState, TaskCommand, TaskEvent>({
      decide: (command, state) => decide(command, state, { turnsWaitForAdmission: true }),
      evolve,
      initialState: initialTaskState,
    });
    const completed = [...running, responded(), { type: 'TurnCompleted', data: { turn: 1 } } as TaskEvent];
    const message = (messageId: string, queued = true): TaskEvent => ({
      type: 'UserMessageAdded',
      data: { messageId, text: messageId, queued },
    });
    const fold = (events: TaskEvent[]) => events.reduce(evolve, initialTaskState());

    it('leaves a follow-up to a finished task waiting, pending, until the loop starts its turn', () => {
      queuedSpec
        .given(completed)
        .when({ type: 'AddUserMessage', data: { messageId: 'm2', text: 'm2' } })
        .then([message('m2')]);
      expect(fold([...completed, message('m2')])).toMatchObject({ status: 'pending', turn: 1, queued: [{ messageId: 'm2' }] });
      queuedSpec
        .given([...completed, message('m2')])
        .when({ type: 'StartTurn', data: {} })
        .then([turnStarted(2, 'm2')]);
    });
    it('ends a turn without starting the queued follow-up: the task waits pending', () => {
      queuedSpec
        .given([...running, message('m2')])
        .when(response([], 'done'))
        .then([
          responded(),
          { type: 'AssistantTextProduced', data: { turn: 1, step: 1, text: 'done' } },
          { type: 'TurnCompleted', data: { turn: 1, usage: spent } },
        ]);
      queuedSpec
        .given([...running, message('m2')])
        .when({ type: 'FailTurn', data: { turn: 1, error: 'x' } })
        .then([{ type: 'TaskFailed', data: { turn: 1, error: 'x', usage: nothingSpent } }]);
      expect(fold([...running, message('m2'), { type: 'TaskFailed', data: { turn: 1, error: 'x' } }])).toMatchObject({
        status: 'pending',
        turn: 1,
      });
    });
    it('queues a further follow-up behind the waiting one, and cancel drops both', () => {
      const waiting = [...completed, message('m2')];
      queuedSpec
        .given(waiting)
        .when({ type: 'AddUserMessage', data: { messageId: 'm3', text: 'm3' } })
        .then([message('m3')]);
      queuedSpec
        .given([...waiting, message('m3')])
        .when({ type: 'CancelTask', data: {} })
        .then([{ type: 'TaskCancelled', data: { turn: 1, droppedMessageIds: ['m2', 'm3'], usage: nothingSpent } }]);
    });
    it('refuses what belonged to the ended turn while the next one waits', () => {
      const ended = [
        ...waiting(),
        { type: 'UserMessageAdded', data: { messageId: 'm2', text: 'x', queued: true } } as TaskEvent,
        { type: 'TaskFailed', data: { turn: 1, error: 'x' } } as TaskEvent,
      ];
      queuedSpec
        .given(ended)
        .when({ type: 'FailTurn', data: { turn: 1, error: 'again' } })
        .thenThrows(TurnNotRunningError);
      queuedSpec
        .given(ended)
        .when({ type: 'DecideToolCall', data: { callId: 'c1', outcome: 'proceed_once' } })
        .thenThrows(CallNotAwaitingApprovalError);
      queuedSpec
        .given(ended)
        .when({ type: 'ExpireApproval', data: { callId: 'c1', timeoutMs: 1 } })
        .thenThrows(CallNotAwaitingApprovalError);
      queuedSpec.given(ended).when(response([], 'late')).thenThrows(StaleModelResponseError);
    });
  });

  describe('token budget (maxTokens)', () => {
    const completed = [...running, responded(), { type: 'TurnCompleted', data: { turn: 1 } } as TaskEvent];
    it('records the budget a task is created with', () => {
      const withBudget: TaskCreated = { type: 'TaskCreated', data: { ...created().data, maxTokens: 500 } };
      spec.given([]).when({ type: 'CreateTask', data: withBudget.data }).then([withBudget]);
    });
    it('refuses a budget that is not a whole number of at least 1', () => {
      spec
        .given([])
        .when({ type: 'CreateTask', data: { ...created().data, maxTokens: 0 } })
        .thenThrows(ValidationError);
      spec
        .given(completed)
        .when({ type: 'AddUserMessage', data: { messageId: 'm2', text: 'more', maxTokens: 2.5 } })
        .thenThrows(ValidationError);
    });
    it("records a follow-up's new budget with its message", () =>
      spec
        .given(completed)
        .when({ type: 'AddUserMessage', data: { messageId: 'm2', text: 'more', maxTokens: 900 } })
        .then([
          { type: 'UserMessageAdded', data: { messageId: 'm2', text: 'more', queued: false, maxTokens: 900 } },
          turnStarted(2, 'm2'),
        ]));
    it('folds the budget in force: the create field, then each follow-up that sets one', () => {
      const state = [
        { type: 'TaskCreated', data: { ...created().data, maxTokens: 10 } } as TaskEvent,
        turnStarted(),
        responded(),
        { type: 'TurnCompleted', data: { turn: 1 } } as TaskEvent,
        { type: 'UserMessageAdded', data: { messageId: 'm2', text: 'more', queued: false, maxTokens: 50 } } as TaskEvent,
        { type: 'UserMessageAdded', data: { messageId: 'm3', text: 'again', queued: true } } as TaskEvent,
      ].reduce(evolve, initialTaskState());
      expect(state).toMatchObject({ maxTokens: 50, usage: { totalTokens: 3 } });
      expect(created().data).not.toHaveProperty('maxTokens');
      expect([created()].reduce(evolve, initialTaskState())).not.toHaveProperty('maxTokens');
    });
  });

  describe('cost budget (maxCostUsd)', () => {
    const completed = [...running, responded(), { type: 'TurnCompleted', data: { turn: 1 } } as TaskEvent];
    it("records the budget a task is created with, and a follow-up's new one", () => {
      const withBudget: TaskCreated = { type: 'TaskCreated', data: { ...created().data, maxCostUsd: 0.25 } };
      spec.given([]).when({ type: 'CreateTask', data: withBudget.data }).then([withBudget]);
      spec
        .given(completed)
        .when({ type: 'AddUserMessage', data: { messageId: 'm2', text: 'more', maxCostUsd: 2 } })
        .then([{ type: 'UserMessageAdded', data: { messageId: 'm2', text: 'more', queued: false, maxCostUsd: 2 } }, turnStarted(2, 'm2')]);
    });
    it('refuses a budget that is not a positive number', () => {
      spec
        .given([])
        .when({ type: 'CreateTask', data: { ...created().data, maxCostUsd: 0 } })
        .thenThrows(ValidationError);
      spec
        .given(completed)
        .when({ type: 'AddUserMessage', data: { messageId: 'm2', text: 'more', maxCostUsd: Number.NaN } })
        .thenThrows(ValidationError);
    });
    it('folds the budget in force and what priced calls cost', () => {
      const priced = (step: number, costUsd: number | null): TaskEvent => ({
        type: 'ModelResponded',
        data: {
          turn: 1,
          step,
          model: 'm',
          finishReason: 'tool_calls',
          usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2, costUsd },
        },
      });
      const state = [
        { type: 'TaskCreated', data: { ...created().data, maxCostUsd: 1 } } as TaskEvent,
        turnStarted(),
        priced(1, 0.1),
        priced(2, null),
        priced(3, 0.2),
      ].reduce(evolve, initialTaskState());
      expect(state).toMatchObject({ maxCostUsd: 1, pricedCostUsd: 0.3, usage: { costUsd: null }, turnUsage: { costUsd: null } });
    });
  });

  describe('model responses', () => {
    it("records on TurnCompleted the turn's own usage: its model calls summed, cache counts included", () => {
      const cached = { inputTokens: 100, outputTokens: 5, totalTokens: 105, cacheReadTokens: 80, cacheWriteTokens: 10 };
      const earlierTurn = [responded(), { type: 'TurnCompleted', data: { turn: 1, usage: spent } } as TaskEvent, turnStarted(2, 'm2')];
      const secondTurn = [
        ...running,
        ...earlierTurn,
        { ...responded(1, 2), data: { ...responded(1, 2).data, usage: cached } } as TaskEvent,
      ];
      const events = decide(
        { type: 'RecordModelResponse', data: { turn: 2, step: 2, text: 'done', toolCalls: [], usage, model: 'x', finishReason: 'stop' } },
        [...secondTurn].reduce(evolve, initialTaskState()),
      );
      expect(events.at(-1)).toEqual({
        type: 'TurnCompleted',
        data: {
          turn: 2,
          usage: { inputTokens: 101, outputTokens: 7, totalTokens: 108, cacheReadTokens: 80, cacheWriteTokens: 10, costUsd: null },
        },
      });
    });
    it('ends the turn when the model answers with text only', () =>
      spec
        .given(running)
        .when(response([], 'hi'))
        .then([
          responded(),
          { type: 'AssistantTextProduced', data: { turn: 1, step: 1, text: 'hi' } },
          { type: 'TurnCompleted', data: { turn: 1, usage: spent } },
        ]));
    it('records several tool calls, approved when autoExecute is on', () =>
      spec
        .given(running)
        .when(
          response([
            { callId: 'a', toolName: 'list_files', args: {} },
            { callId: 'b', toolName: 'read_file', args: { path: 'x' } },
          ]),
        )
        .then([
          responded(),
          requested('a', 'approved'),
          {
            type: 'ToolCallRequested',
            data: { turn: 1, step: 1, callId: 'b', toolName: 'read_file', args: { path: 'x' }, status: 'approved' },
          },
        ]));
    it('asks for approval when autoExecute is off', () =>
      spec
        .given([created(false), turnStarted()])
        .when(response([{ callId: 'a', toolName: 'list_files', args: {} }]))
        .then([responded(), requested('a', 'awaiting_approval')]));
    it('refuses a response for the wrong step', () =>
      spec
        .given(running)
        .when(response([], 'x', 2))
        .thenThrows(StaleModelResponseError));
    it('refuses a response while calls are unfinished', () =>
      spec
        .given([...running, responded(), requested('a', 'approved')])
        .when(response([], 'x', 2))
        .thenThrows(StaleModelResponseError));
  });

  describe('running tools', () => {
    const approved = [...running, responded(), requested('a', 'approved'), requested('b', 'approved')];
    it('starts the next approved call', () =>
      spec
        .given(approved)
        .when({ type: 'StartToolCall', data: { callId: 'a' } })
        .then([{ type: 'ToolCallStarted', data: { callId: 'a', toolName: 'list_files' } }]));
    it('keeps the model order: a later call cannot start first', () =>
      spec
        .given(approved)
        .when({ type: 'StartToolCall', data: { callId: 'b' } })
        .thenThrows(CallNotNextApprovedError));
    it('refuses to finish a call that has not started', () =>
      spec
        .given(approved)
        .when({ type: 'FinishToolCall', data: { callId: 'a', status: 'success', output: '', durationMs: 1 } })
        .thenThrows(CallNotRunningError));
    it('never starts a call twice', () =>
      spec
        .given([...approved, { type: 'ToolCallStarted', data: { callId: 'a', toolName: 'list_files' } }])
        .when({ type: 'StartToolCall', data: { callId: 'a' } })
        .thenThrows(CallNotNextApprovedError));
  });

  describe('approvals', () => {
    it('runs a call approved once', () =>
      spec
        .given(waiting())
        .when({ type: 'DecideToolCall', data: { callId: 'c1', outcome: 'proceed_once' } })
        .then([{ type: 'ToolCallDecided', data: { callId: 'c1', outcome: 'proceed_once', approved: true } }]));
    it('records a rule for proceed_always on shell by program name', () =>
      spec
        .given(waiting())
        .when({ type: 'DecideToolCall', data: { callId: 'c1', outcome: 'proceed_always' } })
        .then([
          {
            type: 'ToolCallDecided',
            data: { callId: 'c1', outcome: 'proceed_always', approved: true, rule: { toolName: 'shell', programs: ['ls'] } },
          },
        ]));
    it('closes a cancelled call with a declined result', () =>
      spec
        .given(waiting())
        .when({ type: 'DecideToolCall', data: { callId: 'c1', outcome: 'cancel' } })
        .then([
          { type: 'ToolCallDecided', data: { callId: 'c1', outcome: 'cancel', approved: false } },
          {
            type: 'ToolCallFinished',
            data: { callId: 'c1', toolName: 'shell', status: 'cancelled', output: DECLINED_OUTPUT, durationMs: 0 },
          },
        ]));
    it('answers NOT_FOUND for an unknown call', () =>
      spec
        .given(waiting())
        .when({ type: 'DecideToolCall', data: { callId: 'nope', outcome: 'cancel' } })
        .thenThrows(NotFoundError));
    it('refuses a second decision: the call is no longer awaiting approval', () =>
      spec
        .given([...waiting(), { type: 'ToolCallDecided', data: { callId: 'c1', outcome: 'proceed_once', approved: true } }])
        .when({ type: 'DecideToolCall', data: { callId: 'c1', outcome: 'cancel' } })
        .thenThrows(CallNotAwaitingApprovalError, /^tool call c1 is not awaiting approval$/));
    it('names the condition in the error code, which the API answers as CONFLICT', () => {
      const error = new CallNotAwaitingApprovalError('c1');
      expect(error).toBeInstanceOf(TaskConflictError);
      expect(error).toMatchObject({ name: 'CallNotAwaitingApprovalError', code: 'TASK.CALL_NOT_AWAITING_APPROVAL' });
    });

    describe('after proceed_always on `ls` (a rule recorded before `programs` existed)', () => {
      const always = [
        ...waiting(),
        {
          type: 'ToolCallDecided',
          data: { callId: 'c1', outcome: 'proceed_always', approved: true, rule: { toolName: 'shell', program: 'ls' } },
        } as TaskEvent,
        { type: 'ToolCallStarted', data: { callId: 'c1', toolName: 'shell' } } as TaskEvent,
        { type: 'ToolCallFinished', data: { callId: 'c1', toolName: 'shell', status: 'success', output: '', durationMs: 1 } } as TaskEvent,
      ];
      const next = (command: string) => response([{ callId: 'c2', toolName: 'shell', args: { command } }], '', 2);
      const statusOf = (command: string) => {
        const events = spec.given(always).when(next(command)).events();
        return (events.find((e) => e.type === 'ToolCallRequested')!.data as { status: string }).status;
      };
      it('auto-approves the same program and says which rule allowed it', () => {
        const events = spec.given(always).when(next('ls src')).events();
        expect(events.find((e) => e.type === 'ToolCallRequested')!.data).toMatchObject({
          status: 'approved',
          approvedByRule: { toolName: 'shell', programs: ['ls'] },
        });
      });
      it.each(['rm -rf x', 'ls && rm -rf x', 'echo $(id)', 'cat a > b', 'ls; id', 'ls | sh'])('still asks for %s', (command) =>
        expect(statusOf(command)).toBe('awaiting_approval'),
      );
    });
  });

  describe('approval timeout', () => {
    const expire = { type: 'ExpireApproval', data: { callId: 'c1', timeoutMs: 500 } } as const;
    it('treats an undecided call as declined and says it expired', () =>
      spec
        .given(waiting())
        .when(expire)
        .then([
          { type: 'ToolCallApprovalExpired', data: { callId: 'c1', toolName: 'shell', timeoutMs: 500 } },
          {
            type: 'ToolCallFinished',
            data: { callId: 'c1', toolName: 'shell', status: 'cancelled', output: expiredOutput(500), durationMs: 0 },
          },
        ]));
    it('refuses to expire a call that was decided meanwhile', () =>
      spec
        .given([...waiting(), { type: 'ToolCallDecided', data: { callId: 'c1', outcome: 'proceed_once', approved: true } }])
        .when(expire)
        .thenThrows(CallNotAwaitingApprovalError));
    it('refuses a decision after the call expired', () =>
      spec
        .given([...waiting(), ...spec.given(waiting()).when(expire).events()])
        .when({ type: 'DecideToolCall', data: { callId: 'c1', outcome: 'proceed_once' } })
        .thenThrows(CallNotAwaitingApprovalError));
  });

  describe('failing and cancelling', () => {
    it('fails the running turn', () =>
      spec
        .given(running)
        .when({ type: 'FailTurn', data: { turn: 1, error: 'boom' } })
        .then([{ type: 'TaskFailed', data: { turn: 1, error: 'boom', usage: nothingSpent } }]));
    it('refuses to fail a turn that is not running', () =>
      spec
        .given(running)
        .when({ type: 'FailTurn', data: { turn: 2, error: 'x' } })
        .thenThrows(TurnNotRunningError));
    it('cancels: closes unfinished calls and drops queued follow-ups', () =>
      spec
        .given([...waiting(), { type: 'UserMessageAdded', data: { messageId: 'm2', text: 'later', queued: true } }])
        .when({ type: 'CancelTask', data: {} })
        .then([
          {
            type: 'ToolCallFinished',
            data: { callId: 'c1', toolName: 'shell', status: 'cancelled', output: 'The task was cancelled.', durationMs: 0 },
          },
          { type: 'TaskCancelled', data: { turn: 1, droppedMessageIds: ['m2'], usage: spent } },
        ]));
    it('changes nothing when cancelling a finished task', () =>
      spec
        .given([...running, { type: 'TaskFailed', data: { turn: 1, error: 'x' } }])
        .when({ type: 'CancelTask', data: {} })
        .thenNothing());
  });

  describe('follow-ups while a turn runs (ifRunning)', () => {
    const interrupt = (data: Partial<Extract<TaskCommand, { type: 'InterruptTurn' }>['data']> = {}): TaskCommand => ({
      type: 'InterruptTurn',
      data: { turn: 1, awaiting: ['c1'], messageId: 'm2', text: 'instead', ...data },
    });
    const closedC1: TaskEvent = {
      type: 'ToolCallFinished',
      data: { callId: 'c1', toolName: 'shell', status: 'cancelled', output: 'The turn was interrupted.', durationMs: 0 },
    };
    const next: TaskEvent[] = [
      { type: 'UserMessageAdded', data: { messageId: 'm2', text: 'instead', queued: false } },
      { type: 'TurnStarted', data: { turn: 2, messageId: 'm2' } },
    ];

    it('reject: refused while a turn runs, recorded as any follow-up when none does', () => {
      spec
        .given(running)
        .when({ type: 'AddUserMessage', data: { messageId: 'm2', text: 'x', ifRunning: 'reject' } })
        .thenThrows(TurnRunningError);
      spec
        .given([...running, { type: 'TurnCompleted', data: { turn: 1 } }])
        .when({ type: 'AddUserMessage', data: { messageId: 'm2', text: 'x', ifRunning: 'reject' } })
        .then([
          { type: 'UserMessageAdded', data: { messageId: 'm2', text: 'x', queued: false } },
          { type: 'TurnStarted', data: { turn: 2, messageId: 'm2' } },
        ]);
    });

    it('interrupt: closes the waiting call, ends the turn as interrupted and starts the message at once, keeping queued follow-ups', () =>
      spec
        .given([...waiting(), { type: 'UserMessageAdded', data: { messageId: 'm3', text: 'later', queued: true } }])
        .when(interrupt())
        .then([
          closedC1,
          { type: 'TaskCancelled', data: { turn: 1, droppedMessageIds: [], usage: turnUsage, reason: 'interrupted' } },
          ...next,
        ]));

    it("interrupt: records the message's new cost budget with it, and refuses a bad one", () => {
      spec
        .given(waiting())
        .when(interrupt({ maxCostUsd: 3 }))
        .then([
          closedC1,
          { type: 'TaskCancelled', data: { turn: 1, droppedMessageIds: [], usage: turnUsage, reason: 'interrupted' } },
          { type: 'UserMessageAdded', data: { messageId: 'm2', text: 'instead', maxCostUsd: 3, queued: false } },
          next[1],
        ]);
      spec
        .given(waiting())
        .when(interrupt({ maxCostUsd: -1 }))
        .thenThrows(ValidationError);
    });

    it('rollback: records the turn undone, from its start to the interrupted turn end, with the checkpoint of its start', () => {
      const events = waiting();
      const state = events.reduce(evolve, initialTaskState());
      const ref = { lineage: 'task_x', seq: 1, root: 'r', files: 1, bytes: 1 } as never;
      const decided = decide(interrupt({ rollback: { fromEventId: 2, checkpoint: ref, artifacts: [] } }), state, undefined, events.length);
      expect(decided).toEqual([
        closedC1,
        { type: 'TaskCancelled', data: { turn: 1, droppedMessageIds: [], usage: turnUsage, reason: 'interrupted' } },
        { type: 'TurnRolledBack', data: { turn: 1, fromEventId: 2, toEventId: events.length + 2, checkpoint: ref, artifacts: [] } },
        ...next,
      ]);
      const after = decided.reduce(evolve, state);
      expect(after).toMatchObject({ status: 'running', turn: 2, rollbacks: 1, lastCheckpoint: ref });
    });

    it('an interrupt loses to a decision on a call it saw waiting, to a cancel and to another interrupt', () => {
      spec
        .given([...waiting(), { type: 'ToolCallDecided', data: { callId: 'c1', outcome: 'proceed_once', approved: true } }])
        .when(interrupt())
        .thenThrows(TurnDecidedError);
      spec
        .given([...waiting(), closedC1, { type: 'TaskCancelled', data: { turn: 1, droppedMessageIds: [] } }])
        .when(interrupt())
        .thenThrows(TurnDecidedError);
      spec
        .given([
          ...waiting(),
          closedC1,
          { type: 'TaskCancelled', data: { turn: 1, droppedMessageIds: [], usage: turnUsage, reason: 'interrupted' } },
          ...next,
        ])
        .when(interrupt({ messageId: 'm9' }))
        .thenThrows(TurnDecidedError);
    });

    it('a turn that ended by itself meanwhile leaves an ordinary follow-up', () =>
      spec
        .given([...running, { type: 'TurnCompleted', data: { turn: 1 } }])
        .when(interrupt({ awaiting: [] }))
        .then(next));
  });
});
