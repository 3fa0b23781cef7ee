import { ConflictError, NotFoundError } from '@app/common';
import { RemoteError } from '@app/bus';
import { ExpectedRevisionConflictError } from '@app/event-store';
import {
  CallNotAwaitingApprovalError,
  NoTurnWaitingError,
  SandboxNotInSnapshotError,
  TaskAlreadyExistsError,
  TurnNotRunningError,
  UnreadableTaskEventError,
} from '@app/task-domain';
import { publicErrorOf } from './public-error';

describe('publicErrorOf', () => {
  const conflicts = [
    new CallNotAwaitingApprovalError('c1'),
    new TaskAlreadyExistsError('t'),
    new NoTurnWaitingError(),
    new TurnNotRunningError(2),
    new SandboxNotInSnapshotError('s'),
  ];
  it.each(conflicts)('answers the task conflict %s as CONFLICT, in its own words', (error) =>
    expect(publicErrorOf(error)).toEqual({ code: 'CONFLICT', message: error.message }),
  );

  it('answers a second approval exactly as the contract shows it', () =>
    expect(publicErrorOf(new CallNotAwaitingApprovalError('call_1'))).toEqual({
      code: 'CONFLICT',
      message: 'tool call call_1 is not awaiting approval',
    }));

  it('answers a lost race with concurrent writers as CONFLICT without naming streams or revisions', () =>
    expect(publicErrorOf(new ExpectedRevisionConflictError('task-t', 3, 4))).toEqual({
      code: 'CONFLICT',
      message: 'The task changed concurrently; retry the request',
    }));

  it('keeps the public code an AppError already has', () => {
    expect(publicErrorOf(new NotFoundError('task'))).toEqual({ code: 'NOT_FOUND', message: 'task not found' });
    expect(publicErrorOf(new ConflictError('clash'))).toEqual({ code: 'CONFLICT', message: 'clash' });
  });

  it("maps the code a remote service failed with, public or a lib's", () => {
    expect(publicErrorOf(new RemoteError('s', 'NOT_FOUND', 'gone'))).toEqual({ code: 'NOT_FOUND', message: 'gone' });
    expect(publicErrorOf(new RemoteError('s', 'TASK.CALL_NOT_AWAITING_APPROVAL', 'late'))).toEqual({ code: 'CONFLICT', message: 'late' });
  });

  it.each([
    ['an unreadable stored event', new UnreadableTaskEventError('task-t', 2, 'X', 'unknown')],
    ['a remote INTERNAL', new RemoteError('s', 'INTERNAL', 'boom')],
    ['a remote code nobody maps', new RemoteError('s', 'TOOL.FAILED', 'boom')],
    ['a remote code that is an Object property', new RemoteError('s', 'toString', 'boom')],
    ['a Node error with its own code', Object.assign(new Error('reset'), { code: 'ECONNRESET' })],
    ['a plain error', new Error('boom')],
    ['a thrown string', 'boom'],
  ])('leaves %s to the caller (answered as INTERNAL)', (_, error) => expect(publicErrorOf(error)).toBeUndefined());
});
