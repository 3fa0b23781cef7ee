import type { TaskEvent, TaskState } from '@app/task-domain';
import { evolve, initialTaskState } from '@app/task-domain';
import { turnOf } from './turn-of';

const fold = (events: TaskEvent[]): TaskState => events.reduce(evolve, initialTaskState());
const created: TaskEvent = {
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
  },
};
const started = (turn: number, messageId: string): TaskEvent => ({ type: 'TurnStarted', data: { turn, messageId } });
const completed: TaskEvent = { type: 'TurnCompleted', data: { turn: 1 } };

describe('turnOf', () => {
  it('is 0 for a task that does not exist', () => expect(turnOf(initialTaskState())).toBe(0));
  it('is the turn the first message will start while the task is pending', () => expect(turnOf(fold([created]))).toBe(1));
  it('is the running turn once it started', () => expect(turnOf(fold([created, started(1, 'm1')]))).toBe(1));
  it('stays on the last turn after it ended', () => expect(turnOf(fold([created, started(1, 'm1'), completed]))).toBe(1));
  it('moves to the follow-up turn when it starts', () =>
    expect(turnOf(fold([created, started(1, 'm1'), completed, started(2, 'm2')]))).toBe(2));
  it("is a fork's suspended turn while it waits to be resumed", () => {
    const forked: TaskEvent = {
      type: 'TaskForked',
      data: { taskId: 'source', eventId: 2, autoExecute: true, resumes: { turn: 1, messageId: 'm1' } },
    };
    expect(turnOf(fold([created, started(1, 'm1'), forked]))).toBe(1);
  });
});
