import { NotFoundError, ValidationError } from '@app/common';
import type { ForkTask } from '../task.decider';
import { decide } from '../task.decider';
import { MessageNotNextError, NoTurnWaitingError, NotAForkPointError, TaskAlreadyExistsError } from '../task.errors';
import type { SealedSecrets, TaskEvent } from '../task.events';
import type { ExistingTask } from '../task.state';
import { evolve, initialTaskState } from '../task.state';
import { toPublicEvent } from '../projections/public-event.projection';
import type { TaskView } from '../projections/task-view.projection';
import { projectTaskView } from '../projections/task-view.projection';
import type { TurnQueueEntry } from '../projections/turn-queue.projection';
import { outOfLine, projectTurnQueue, turnQueuePlace } from '../projections/turn-queue.projection';
import { forkPrefix, nearestForkPoints } from './fork-point';

const usage = { inputTokens: 1, outputTokens: 2, totalTokens: 3 };
const sourceSecrets: SealedSecrets = { version: 1, keyId: 'k', wrappedKey: 'source-wrapped', ciphertext: 'source-sealed' };
const forkSecrets: SealedSecrets = { version: 1, keyId: 'k', wrappedKey: 'fork-wrapped', ciphertext: 'fork-sealed' };

// A turn in which the model asked for two calls: one ran, the other had started when the task was
// cancelled. Ids are the stream revisions, as callers see them.
const SOURCE: TaskEvent[] = [
  /* 1 message */ {
    type: 'TaskCreated',
    data: {
      taskId: 'source',
      tenantId: 'ten',
      messageId: 'm1',
      text: 'hello',
      autoExecute: true,
      showInHistory: true,
      env: { A: '1' },
      secretNames: ['TOKEN'],
      sealedSecrets: sourceSecrets,
      files: [],
    },
  },
  /* 2 status */ { type: 'TurnStarted', data: { turn: 1, messageId: 'm1' } },
  /* 3 usage */ { type: 'ModelResponded', data: { turn: 1, step: 1, model: 'x', finishReason: 'tool_calls', usage } },
  /* 4 tool_call */ {
    type: 'ToolCallRequested',
    data: { turn: 1, step: 1, callId: 'c1', toolName: 'shell', args: { command: 'ls' }, status: 'approved' },
  },
  /* 5 tool_call */ {
    type: 'ToolCallRequested',
    data: { turn: 1, step: 1, callId: 'c2', toolName: 'shell', args: { command: 'pwd' }, status: 'approved' },
  },
  /* 6 tool_started */ { type: 'ToolCallStarted', data: { callId: 'c1', toolName: 'shell' } },
  /* 7 tool_result */ {
    type: 'ToolCallFinished',
    data: { callId: 'c1', toolName: 'shell', status: 'success', output: 'a', durationMs: 1 },
  },
  /* 8 tool_started */ { type: 'ToolCallStarted', data: { callId: 'c2', toolName: 'shell' } },
  /* 9 message */ { type: 'UserMessageAdded', data: { messageId: 'm2', text: 'also this', queued: true } },
  /* 10 tool_result */ {
    type: 'ToolCallFinished',
    data: { callId: 'c2', toolName: 'shell', status: 'cancelled', output: 'The task was cancelled.', durationMs: 0 },
  },
  /* 11 done */ { type: 'TaskCancelled', data: { turn: 1, droppedMessageIds: ['m2'] } },
];

const fork = (afterEventId: number, more: Partial<ForkTask['data']> = {}): ForkTask => ({
  type: 'ForkTask',
  data: { taskId: 'fork', source: { taskId: 'source', events: SOURCE }, afterEventId, sealedSecrets: forkSecrets, ...more },
});
const stateOf = (events: readonly TaskEvent[]) => events.reduce(evolve, initialTaskState()) as ExistingTask;

describe('fork points', () => {
  it('are the messages, tool results and dones, and nothing else', () => {
    const forkable = SOURCE.map((_, i) => i + 1).filter((id) => {
      try {
        forkPrefix(SOURCE, id, false);
        return true;
      } catch {
        return false;
      }
    });
    expect(forkable).toEqual([1, 7, 9, 10, 11]);
  });

  it('name the nearest fork point on each side of an event that is not one', () => {
    expect(nearestForkPoints(SOURCE, 4)).toEqual({ before: 1, after: 7 });
    expect(nearestForkPoints(SOURCE, 8)).toEqual({ before: 7, after: 9 });
    expect(nearestForkPoints(SOURCE.slice(0, 3), 2)).toEqual({ before: 1 });
  });

  it('refuse a tool_call with a conflict whose message names the nearest fork points', () => {
    const error = catchError(() => forkPrefix(SOURCE, 5, false));
    expect(error).toBeInstanceOf(NotAForkPointError);
    expect(error).toMatchObject({ eventId: 5, kind: 'tool_call', before: 1, after: 7 });
    expect((error as Error).message).toContain('1 before it and 7 after it');
  });

  it('say when there is none after', () => {
    expect((catchError(() => forkPrefix(SOURCE.slice(0, 3), 3, false)) as Error).message).toContain('1 before it and none after it');
  });

  it.each([0, -1, 12, 1.5, Number.NaN])('answer an id the task does not have (%s) with NOT_FOUND', (id) => {
    expect(() => forkPrefix(SOURCE, id, false)).toThrow(NotFoundError);
  });

  it('take a message only after a done', () => {
    expect(() => forkPrefix(SOURCE, 7, true)).toThrow(ValidationError);
    expect(() => forkPrefix(SOURCE, 9, true)).toThrow(ValidationError);
    expect(forkPrefix(SOURCE, 11, true)).toHaveLength(11);
  });
});

describe('ForkTask', () => {
  it('copies events 1..N with the same kinds and data, then TaskForked', () => {
    const events = decide(fork(7), initialTaskState());
    expect(events.slice(1, 7)).toEqual(SOURCE.slice(1, 7));
    expect(events[7]).toEqual({ type: 'TaskForked', data: { taskId: 'source', eventId: 7, autoExecute: true } });
    expect(events).toHaveLength(8);
  });

  it("names the fork in its TaskCreated and carries the fork's own sealed secrets", () => {
    const [created] = decide(fork(7), initialTaskState());
    expect(created).toEqual({ ...SOURCE[0], data: { ...SOURCE[0].data, taskId: 'fork', sealedSecrets: forkSecrets } });
  });

  it('takes autoExecute from the request, else from the source', () => {
    expect(stateOf(decide(fork(7, { autoExecute: false }), initialTaskState())).autoExecute).toBe(false);
    expect(stateOf(decide(fork(7), initialTaskState())).autoExecute).toBe(true);
  });

  it('goes on with the turn after a tool_result: the model is asked once the remaining call has run', () => {
    const state = stateOf(decide(fork(7), initialTaskState()));
    expect(state.status).toBe('running');
    expect(state.forkedFrom).toEqual({ taskId: 'source', eventId: 7 });
    expect(state.calls.map((c) => [c.callId, c.phase])).toEqual([
      ['c1', 'finished'],
      ['c2', 'approved'],
    ]);
  });

  it('runs again a call that had started but not finished at the fork point', () => {
    const state = stateOf(decide(fork(9), initialTaskState()));
    expect(state.calls.find((c) => c.callId === 'c2')?.phase).toBe('approved');
    expect(state.status).toBe('running');
    expect(state.queued.map((m) => m.messageId)).toEqual(['m2']);
  });

  it('keeps a call that waits for approval waiting', () => {
    const waiting: TaskEvent[] = [
      { ...SOURCE[0], data: { ...SOURCE[0].data, autoExecute: false } } as TaskEvent,
      ...SOURCE.slice(1, 3),
      { type: 'ToolCallRequested', data: { turn: 1, step: 1, callId: 'c1', toolName: 'shell', args: {}, status: 'awaiting_approval' } },
      { type: 'UserMessageAdded', data: { messageId: 'm2', text: 'and', queued: true } },
    ];
    const state = stateOf(
      decide({ ...fork(5), data: { ...fork(5).data, source: { taskId: 'source', events: waiting } } }, initialTaskState()),
    );
    expect(state.status).toBe('awaiting_approval');
    expect(state.calls[0].phase).toBe('awaiting_approval');
  });

  it('is at rest after a done, with the status the source had there', () => {
    const events = decide(fork(11), initialTaskState());
    expect(events.at(-1)?.type).toBe('TaskForked');
    expect(stateOf(events).status).toBe('cancelled');
  });

  it('starts a turn with the message given after a done, as a follow-up would', () => {
    const events = decide(fork(11, { message: { messageId: 'm3', text: 'again' } }), initialTaskState());
    expect(events.slice(-2)).toEqual([
      { type: 'UserMessageAdded', data: { messageId: 'm3', text: 'again', queued: false } },
      { type: 'TurnStarted', data: { turn: 2, messageId: 'm3' } },
    ]);
    const waiting = decide(fork(11, { message: { messageId: 'm3', text: 'again' } }), initialTaskState(), { turnsWaitForAdmission: true });
    expect(waiting.at(-1)).toEqual({ type: 'UserMessageAdded', data: { messageId: 'm3', text: 'again', queued: true } });
  });

  it('drops the source envelope when the fork has none of its own', () => {
    const [created] = decide(fork(1, { sealedSecrets: undefined }), initialTaskState());
    expect(created.type === 'TaskCreated' && created.data.sealedSecrets).toBeUndefined();
  });

  it('forks a fork: its forked event is copied like any other, is not a fork point, and the latest names where it came from', () => {
    const first: TaskEvent[] = [
      ...decide(fork(7), initialTaskState()),
      /* 9 */ { type: 'ToolCallStarted', data: { callId: 'c2', toolName: 'shell' } },
      /* 10 */ { type: 'ToolCallFinished', data: { callId: 'c2', toolName: 'shell', status: 'success', output: 'b', durationMs: 1 } },
    ];
    const again = (afterEventId: number): ForkTask => ({
      type: 'ForkTask',
      data: { taskId: 'fork-of-fork', source: { taskId: 'fork', events: first }, afterEventId },
    });
    expect(() => decide(again(8), initialTaskState())).toThrow(NotAForkPointError);
    const events = decide(again(10), initialTaskState());
    expect(events.slice(1, 10)).toEqual(first.slice(1, 10));
    expect(events[10]).toEqual({ type: 'TaskForked', data: { taskId: 'fork', eventId: 10, autoExecute: true } });
    const state = stateOf(events);
    expect(state.forkedFrom).toEqual({ taskId: 'fork', eventId: 10 });
    expect(state.calls.every((c) => c.phase === 'finished')).toBe(true);
  });

  it('refuses an id that already has a stream', () => {
    expect(() => decide(fork(7), stateOf(SOURCE))).toThrow(TaskAlreadyExistsError);
  });
});

describe('ForkTask where turns wait for admission (MAX_RUNNING_TASKS_PER_TENANT)', () => {
  const admitted = { turnsWaitForAdmission: true };

  it('leaves a turn running at the fork point waiting, pending, until ResumeTurn', () => {
    const events = decide(fork(9), initialTaskState(), admitted);
    expect(events.at(-1)).toEqual({
      type: 'TaskForked',
      data: { taskId: 'source', eventId: 9, autoExecute: true, resumes: { turn: 1, messageId: 'm1' } },
    });
    const waiting = stateOf(events);
    expect(waiting.status).toBe('pending');
    // The message queued behind the turn does not overtake it.
    expect(() => decide({ type: 'StartTurn', data: {} }, waiting, admitted)).toThrow(NoTurnWaitingError);
    expect(() => decide({ type: 'ResumeTurn', data: { messageId: 'm2' } }, waiting, admitted)).toThrow(MessageNotNextError);
    expect(() => decide({ type: 'StartToolCall', data: { callId: 'c2' } }, waiting, admitted)).toThrow();

    const resumed = decide({ type: 'ResumeTurn', data: { messageId: 'm1' } }, waiting, admitted);
    expect(resumed).toEqual([{ type: 'TurnResumed', data: { turn: 1, messageId: 'm1' } }]);
    const running = stateOf([...events, ...resumed]);
    expect(running.status).toBe('running');
    expect(running.resuming).toBeUndefined();
    expect(() => decide({ type: 'ResumeTurn', data: { messageId: 'm1' } }, running, admitted)).toThrow(NoTurnWaitingError);
    expect(toPublicEvent(resumed[0])).toEqual({ kind: 'status', data: { status: 'running', turn: 1, messageId: 'm1' } });
  });

  it("drops a cancelled fork's waiting turn from its tenant's line", () => {
    const events = decide(fork(9), initialTaskState(), admitted);
    const cancelled = decide({ type: 'CancelTask', data: {} }, stateOf(events), admitted);
    expect(cancelled.at(-1)).toMatchObject({ type: 'TaskCancelled', data: { turn: 1, droppedMessageIds: ['m1', 'm2'] } });
    const line = [...events, ...cancelled].reduce<TurnQueueEntry>(
      (entry, event, i) => projectTurnQueue(entry, event, i + 1),
      outOfLine('fork', 'ten'),
    );
    expect(turnQueuePlace(line)).toBeUndefined();
    expect(stateOf([...events, ...cancelled])).toMatchObject({ status: 'cancelled', queued: [] });
    expect(stateOf([...events, ...cancelled]).resuming).toBeUndefined();
  });

  it('has nothing to resume after a done, and goes on at once where turns start at once', () => {
    expect(decide(fork(11), initialTaskState(), admitted).at(-1)).toEqual({
      type: 'TaskForked',
      data: { taskId: 'source', eventId: 11, autoExecute: true },
    });
    expect(stateOf(decide(fork(7), initialTaskState())).status).toBe('running');
  });

  it("queues the fork's turn at the end of its tenant's line, at the fork's copy of its message", () => {
    const events = decide(fork(7), initialTaskState(), admitted);
    const positions = events.map((_, i) => 1000 + i);
    const line = events.reduce<TurnQueueEntry>((entry, event, i) => projectTurnQueue(entry, event, positions[i]), outOfLine('fork', 'ten'));
    expect(line).toEqual({ taskId: 'fork', tenantId: 'ten', waiting: [{ messageId: 'm1', position: 1000 }] });
    const running = projectTurnQueue(line, { type: 'TurnResumed', data: { turn: 1, messageId: 'm1' } }, 2000);
    expect(running).toEqual({ taskId: 'fork', tenantId: 'ten', running: 1000, waiting: [] });
    expect(turnQueuePlace(running)).toBe(1000);
  });

  it('shows the fork pending while it waits, then running', () => {
    const events = decide(fork(7), initialTaskState(), admitted);
    const at = '2026-01-01T00:00:00.000Z';
    const view = events.reduce<TaskView | undefined>(
      (v, event, i) => projectTaskView(v, { event, revision: i + 1, recordedAt: at }),
      undefined,
    );
    expect(view?.status).toBe('pending');
    const resumed = projectTaskView(view, {
      event: { type: 'TurnResumed', data: { turn: 1, messageId: 'm1' } },
      revision: events.length + 1,
      recordedAt: at,
    });
    expect(resumed?.status).toBe('running');
  });
});

describe('a fork as callers see it', () => {
  it('has a forked event with where it came from, and the view shows forkedFrom and the fork as itself', () => {
    const events = decide(fork(7, { autoExecute: false }), initialTaskState());
    expect(toPublicEvent(events[7])).toEqual({ kind: 'forked', data: { taskId: 'source', eventId: 7 } });
    const view = events.reduce<TaskView | undefined>(
      (v, event, i) => projectTaskView(v, { event, revision: i + 1, recordedAt: '2026-01-01T00:00:00.000Z' }),
      undefined,
    );
    expect(view).toMatchObject({ id: 'fork', forkedFrom: { taskId: 'source', eventId: 7 }, autoExecute: false, status: 'running' });
  });
});

function catchError(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  throw new Error('expected an error');
}
