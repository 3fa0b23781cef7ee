/**
 * Stable error codes of the public contract. One exception filter maps them to HTTP statuses;
 * services raise them anywhere without knowing about HTTP.
 *
 * Naming: only these codes are bare, because they are the public contract (docs/api.md "Errors").
 * Every other error carries `<AREA>.<CONDITION>` in upper snake case, the area being the lib or
 * service that raises it (EVENT_STORE.CLOSED, TASK.CALL_NOT_AWAITING_APPROVAL, BUS.TIMEOUT), and
 * is declared in that lib's one errors file. services/api/src/errors/public-error.ts is the one
 * place that maps such codes onto these; a code it does not map is answered as INTERNAL.
 */
export type ErrorCode =
  'AUTH_REQUIRED' | 'INVALID_API_KEY' | 'NOT_FOUND' | 'VALIDATION_ERROR' | 'CONFLICT' | 'PAYLOAD_TOO_LARGE' | 'RATE_LIMITED' | 'INTERNAL';

export class AppError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'AppError';
  }
}

export class NotFoundError extends AppError {
  constructor(what: string) {
    super('NOT_FOUND', `${what} not found`);
    this.name = 'NotFoundError';
  }
}

export class ValidationError extends AppError {
  constructor(message: string) {
    super('VALIDATION_ERROR', message);
    this.name = 'ValidationError';
  }
}

export class ConflictError extends AppError {
  constructor(message: string, options?: ErrorOptions) {
    super('CONFLICT', message, options);
    this.name = 'ConflictError';
  }
}

export class PayloadTooLargeError extends AppError {
  constructor(message: string) {
    super('PAYLOAD_TOO_LARGE', message);
    this.name = 'PayloadTooLargeError';
  }
}

/** Too many requests for the tenant; the answer carries `Retry-After: retryAfterSeconds`. */
export class RateLimitedError extends AppError {
  constructor(
    message: string,
    readonly retryAfterSeconds: number,
  ) {
    super('RATE_LIMITED', message);
    this.name = 'RateLimitedError';
  }
}

export const HTTP_STATUS_BY_CODE: Record<ErrorCode, number> = {
  AUTH_REQUIRED: 401,
  INVALID_API_KEY: 401,
  NOT_FOUND: 404,
  VALIDATION_ERROR: 400,
  CONFLICT: 409,
  PAYLOAD_TOO_LARGE: 413,
  RATE_LIMITED: 429,
  INTERNAL: 500,
};
