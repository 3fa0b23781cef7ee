import type { ServiceErrorCode } from './types';

/**
 * Codes the client adds to the service's: the service could not be reached or the connection
 * broke (NETWORK_ERROR), it answered something that is not the documented error envelope
 * (UNEXPECTED_RESPONSE), a stream could not be resumed within its retry bound
 * (STREAM_RETRIES_EXHAUSTED).
 */
export type ClientErrorCode = 'NETWORK_ERROR' | 'UNEXPECTED_RESPONSE' | 'STREAM_RETRIES_EXHAUSTED';

/** Every failure of a call: the service's error envelope, or one of the client's own codes. */
export class AtsError extends Error {
  override readonly name = 'AtsError';

  constructor(
    readonly code: ServiceErrorCode | ClientErrorCode,
    message: string,
    /** The HTTP status; 0 when no answer arrived. */
    readonly status: number,
    /** Seconds the service asked to wait (429 Retry-After). */
    readonly retryAfterSeconds?: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** The error a non-2xx answer stands for: its envelope's code and message, else UNEXPECTED_RESPONSE. */
export function errorFromResponse(response: Response, body: unknown): AtsError {
  const retryAfter = Number(response.headers.get('retry-after'));
  const retryAfterSeconds = Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter : undefined;
  const error = (body as { error?: { code?: unknown; message?: unknown } } | null)?.error;
  if (typeof error?.code === 'string' && typeof error.message === 'string') {
    return new AtsError(error.code as ServiceErrorCode, error.message, response.status, retryAfterSeconds);
  }
  return new AtsError('UNEXPECTED_RESPONSE', `HTTP ${response.status} without an error envelope`, response.status, retryAfterSeconds);
}

/** A fetch that threw: nothing was answered. An abort by the caller is passed on as it is. */
export function networkError(cause: unknown): unknown {
  if (cause instanceof Error && cause.name === 'AbortError') return cause;
  const reason = cause instanceof Error ? (cause.cause instanceof Error ? cause.cause.message : cause.message) : String(cause);
  return new AtsError('NETWORK_ERROR', `the service could not be reached: ${reason}`, 0, undefined, { cause });
}
