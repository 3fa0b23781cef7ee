// The error types only: the @app/common index also re-exports modules that use Node (fs, crypto).
import { ValidationError } from '@app/common/errors/app-error';

// The task domain's errors. A conflict means the task's state does not allow the command (now):
// each condition has its own class and code, and the API answers every one of them with the
// public CONFLICT (services/api/src/errors/public-error.ts). Messages are shown to callers.

export const TASK_ERROR_CODES = {
  ALREADY_EXISTS: 'TASK.ALREADY_EXISTS',
  NO_TURN_WAITING: 'TASK.NO_TURN_WAITING',
  MESSAGE_NOT_NEXT: 'TASK.MESSAGE_NOT_NEXT',
  TURN_NOT_RUNNING: 'TASK.TURN_NOT_RUNNING',
  TURN_RUNNING: 'TASK.TURN_RUNNING',
  TURN_DECIDED: 'TASK.TURN_DECIDED',
  STALE_MODEL_RESPONSE: 'TASK.STALE_MODEL_RESPONSE',
  CALL_NOT_AWAITING_APPROVAL: 'TASK.CALL_NOT_AWAITING_APPROVAL',
  CALL_NOT_NEXT_APPROVED: 'TASK.CALL_NOT_NEXT_APPROVED',
  CALL_NOT_RUNNING: 'TASK.CALL_NOT_RUNNING',
  SANDBOX_ALREADY_EXPIRED: 'TASK.SANDBOX_ALREADY_EXPIRED',
  SANDBOX_NOT_IN_SNAPSHOT: 'TASK.SANDBOX_NOT_IN_SNAPSHOT',
  NOT_A_FORK_POINT: 'TASK.NOT_A_FORK_POINT',
  UNREADABLE_EVENT: 'TASK.UNREADABLE_EVENT',
} as const;

export type TaskErrorCode = (typeof TASK_ERROR_CODES)[keyof typeof TASK_ERROR_CODES];
type TaskConflictCode = Exclude<TaskErrorCode, typeof TASK_ERROR_CODES.UNREADABLE_EVENT>;

/** The decider refused a command that the task's current state does not allow. */
export abstract class TaskConflictError extends Error {
  abstract readonly code: TaskConflictCode;

  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}

export class TaskAlreadyExistsError extends TaskConflictError {
  readonly code = TASK_ERROR_CODES.ALREADY_EXISTS;
  constructor(readonly taskId: string) {
    super(`task ${taskId} already exists`);
  }
}

export class NoTurnWaitingError extends TaskConflictError {
  readonly code = TASK_ERROR_CODES.NO_TURN_WAITING;
  constructor() {
    super('no turn is waiting to start');
  }
}

/** The agent loop admitted a message, but another one waits before it by now. */
export class MessageNotNextError extends TaskConflictError {
  readonly code = TASK_ERROR_CODES.MESSAGE_NOT_NEXT;
  constructor(readonly messageId: string) {
    super(`message ${messageId} is not the next to start a turn`);
  }
}

export class TurnNotRunningError extends TaskConflictError {
  readonly code = TASK_ERROR_CODES.TURN_NOT_RUNNING;
  constructor(readonly turn: number) {
    super(`turn ${turn} is not running`);
  }
}

/** A follow-up sent with ifRunning `reject` while a turn runs: nothing is recorded. */
export class TurnRunningError extends TaskConflictError {
  readonly code = TASK_ERROR_CODES.TURN_RUNNING;
  constructor(readonly turn: number) {
    super(`turn ${turn} is running and the message was sent with ifRunning "reject": nothing was recorded`);
  }
}

/**
 * An interrupt lost to another change of the turn it meant to stop: a decision on a call that
 * waited, a cancel, another interrupt (docs/api.md "Follow-ups").
 */
export class TurnDecidedError extends TaskConflictError {
  readonly code = TASK_ERROR_CODES.TURN_DECIDED;
  constructor(
    readonly turn: number,
    why: string,
  ) {
    super(`turn ${turn} was not interrupted: ${why}`);
  }
}

/** The turn moved on (cancelled, failed, or this step was already recorded) while the model answered. */
export class StaleModelResponseError extends TaskConflictError {
  readonly code = TASK_ERROR_CODES.STALE_MODEL_RESPONSE;
  constructor(
    readonly turn: number,
    readonly step: number,
  ) {
    super(`a model response for turn ${turn} step ${step} is stale`);
  }
}

/** Already decided, expired, or its turn ended: what a second approval gets. */
export class CallNotAwaitingApprovalError extends TaskConflictError {
  readonly code = TASK_ERROR_CODES.CALL_NOT_AWAITING_APPROVAL;
  constructor(readonly callId: string) {
    super(`tool call ${callId} is not awaiting approval`);
  }
}

/** Calls run one at a time in the model's order, each only once approved. */
export class CallNotNextApprovedError extends TaskConflictError {
  readonly code = TASK_ERROR_CODES.CALL_NOT_NEXT_APPROVED;
  constructor(readonly callId: string) {
    super(`tool call ${callId} is not the next approved call`);
  }
}

export class CallNotRunningError extends TaskConflictError {
  readonly code = TASK_ERROR_CODES.CALL_NOT_RUNNING;
  constructor(readonly callId: string) {
    super(`tool call ${callId} is not running`);
  }
}

export class SandboxAlreadyExpiredError extends TaskConflictError {
  readonly code = TASK_ERROR_CODES.SANDBOX_ALREADY_EXPIRED;
  constructor() {
    super('the sandbox has already expired');
  }
}

export class SandboxNotInSnapshotError extends TaskConflictError {
  readonly code = TASK_ERROR_CODES.SANDBOX_NOT_IN_SNAPSHOT;
  constructor(readonly snapshotKey: string) {
    super(`the sandbox is not waiting in snapshot ${snapshotKey}`);
  }
}

/** A fork asked for after an event that is not a `message`, a `tool_result` or a `done`: the message names where it could be taken. */
export class NotAForkPointError extends TaskConflictError {
  readonly code = TASK_ERROR_CODES.NOT_A_FORK_POINT;
  constructor(
    readonly eventId: number,
    readonly kind: string,
    readonly before: number | undefined,
    readonly after: number | undefined,
  ) {
    const nearest = [
      before === undefined ? 'none before it' : `${before} before it`,
      after === undefined ? 'none after it' : `${after} after it`,
    ];
    super(
      `event ${eventId} is a ${kind} event: a task can be forked only after a message, a tool_result or a done event; ` +
        `the nearest such events are ${nearest.join(' and ')}`,
    );
  }
}

/** A bad MCP server list: a 400 VALIDATION_ERROR when it came with a request. */
export class McpConfigError extends ValidationError {}

/**
 * A stored event that this code cannot read as a TaskEvent (see task-event.decoder.ts): an unknown
 * type, a schema version it does not know, or data that is not an object. Not a conflict: the
 * store holds something this release does not understand, so the reader stops (500 for a request).
 */
export class UnreadableTaskEventError extends Error {
  readonly code = TASK_ERROR_CODES.UNREADABLE_EVENT;
  constructor(
    readonly streamId: string,
    readonly revision: number,
    readonly type: string,
    reason: string,
  ) {
    super(`event ${revision} (${type}) of stream ${streamId}: ${reason}`);
    this.name = 'UnreadableTaskEventError';
  }
}
