import type { ErrorCode } from '@app/common';
import { AppError, HTTP_STATUS_BY_CODE } from '@app/common';
import { RemoteError } from '@app/bus';
import type { TaskErrorCode } from '@app/task-domain';
import { TASK_ERROR_CODES } from '@app/task-domain';

/** What the contract lets a client see of an error: its public code, and a message. */
export interface PublicError {
  readonly code: ErrorCode;
  readonly message: string;
}

/** `message`: said instead of the error's own words, which are internal. */
type Answer = { readonly code: ErrorCode; readonly message?: string } | undefined;

const CONFLICT: Answer = { code: 'CONFLICT' };

/** Every task code is here: a new one does not compile until it is given its public answer. */
const TASK_ANSWERS: Record<TaskErrorCode, Answer> = {
  [TASK_ERROR_CODES.ALREADY_EXISTS]: CONFLICT,
  [TASK_ERROR_CODES.NO_TURN_WAITING]: CONFLICT,
  [TASK_ERROR_CODES.MESSAGE_NOT_NEXT]: CONFLICT,
  [TASK_ERROR_CODES.TURN_NOT_RUNNING]: CONFLICT,
  [TASK_ERROR_CODES.TURN_RUNNING]: CONFLICT,
  [TASK_ERROR_CODES.TURN_DECIDED]: CONFLICT,
  [TASK_ERROR_CODES.STALE_MODEL_RESPONSE]: CONFLICT,
  [TASK_ERROR_CODES.CALL_NOT_AWAITING_APPROVAL]: CONFLICT,
  [TASK_ERROR_CODES.CALL_NOT_NEXT_APPROVED]: CONFLICT,
  [TASK_ERROR_CODES.CALL_NOT_RUNNING]: CONFLICT,
  [TASK_ERROR_CODES.SANDBOX_ALREADY_EXPIRED]: CONFLICT,
  [TASK_ERROR_CODES.SANDBOX_NOT_IN_SNAPSHOT]: CONFLICT,
  [TASK_ERROR_CODES.NOT_A_FORK_POINT]: CONFLICT,
  // The store holds an event this release cannot read: an internal failure (500), logged.
  [TASK_ERROR_CODES.UNREADABLE_EVENT]: undefined,
};

/**
 * The one place where the libs' own codes (`<LIB>.<CONDITION>`, see libs/common/src/errors/app-error.ts)
 * become the public codes of the contract. A code not listed here is internal: 500 INTERNAL.
 */
const ANSWERS = new Map<string, Answer>([
  ...Object.entries(TASK_ANSWERS),
  // Retries ran out against concurrent writers; stream names and revisions are not for clients.
  ['EVENT_STORE.EXPECTED_REVISION_CONFLICT', { code: 'CONFLICT', message: 'The task changed concurrently; retry the request' }],
]);

/**
 * The public code and message of an error raised here or, over the bus, by another service; undefined
 * for an error the contract does not name (the caller answers it as INTERNAL). An AppError already
 * carries a public code; a RemoteError carries the remote error's code, public or a lib's.
 */
export function publicErrorOf(error: unknown): PublicError | undefined {
  if (error instanceof AppError) return { code: error.code, message: error.message };
  if (error instanceof RemoteError) {
    if (isPublicCode(error.remoteCode) && error.remoteCode !== 'INTERNAL') return { code: error.remoteCode, message: error.message };
    return answer(error.remoteCode, error.message);
  }
  const code = (error as { code?: unknown } | null)?.code;
  return error instanceof Error && typeof code === 'string' ? answer(code, error.message) : undefined;
}

function answer(code: string, message: string): PublicError | undefined {
  const known = ANSWERS.get(code);
  return known && { code: known.code, message: known.message ?? message };
}

const isPublicCode = (code: string): code is ErrorCode => Object.prototype.hasOwnProperty.call(HTTP_STATUS_BY_CODE, code);
