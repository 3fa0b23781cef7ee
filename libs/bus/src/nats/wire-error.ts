import { NO_MESSAGE_HANDLER } from '@nestjs/microservices/constants';
import { types } from 'node:util';
import { NoHandlerError, RemoteError } from '../bus.port';

/** How a handler's failure travels in the `err` field of a Nest NATS reply packet. */
export interface WireError {
  readonly code: string;
  readonly message: string;
}

export function toWireError(error: unknown): WireError {
  const e = error as { code?: unknown; message?: unknown } | undefined;
  return {
    code: typeof e?.code === 'string' ? e.code : 'INTERNAL',
    message: typeof e?.message === 'string' ? e.message : String(error),
  };
}

/**
 * Turns what a request failed with into the port's errors. A remote failure arrives decoded from
 * JSON (a plain object or, from Nest's own exception handling, a string); an `Error` instance was
 * raised here (timeout, no responders, a payload NATS refused) and passes through unchanged.
 */
export function fromWireError(subject: string, err: unknown): Error {
  if (err instanceof Error || types.isNativeError(err)) return err;
  if (typeof err === 'string') return err === NO_MESSAGE_HANDLER ? new NoHandlerError(subject) : new RemoteError(subject, 'INTERNAL', err);
  const e = err as { code?: unknown; message?: unknown } | null;
  const code = typeof e?.code === 'string' ? e.code : 'INTERNAL';
  if (code === 'BUS.NO_HANDLER') return new NoHandlerError(subject);
  // Nest's RpcExceptionsHandler answers `{status: 'error', message}`, without a code.
  return new RemoteError(subject, code, typeof e?.message === 'string' ? e.message : JSON.stringify(err));
}
