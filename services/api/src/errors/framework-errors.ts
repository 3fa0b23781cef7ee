import type { ErrorCode } from '@app/common';
import { AppError, HTTP_STATUS_BY_CODE, ValidationError } from '@app/common';
import type { IncomingMessage } from 'node:http';
import { maxHeaderSize } from 'node:http';

/** What the client is told: an HTTP status and the contract's `{code, message}`. */
export interface ErrorResponse {
  readonly status: number;
  readonly code: ErrorCode;
  readonly message: string;
}

/** Fastify's default, set explicitly: ids are far shorter (task_ + 32 hex digits). */
export const MAX_PARAM_LENGTH = 100;

const contract = (code: ErrorCode, message: string): ErrorResponse => ({ status: HTTP_STATUS_BY_CODE[code], code, message });

/**
 * Errors that Fastify's router and Node's HTTP parser raise before any route, told in the
 * contract's words (their own messages quote the whole URL). undefined for any other error.
 */
export function describeFrameworkError(error: unknown): ErrorResponse | undefined {
  const code = String((error as { code?: unknown } | null)?.code);
  switch (code) {
    case 'FST_ERR_BAD_URL':
      return contract('VALIDATION_ERROR', 'URL path is not valid: its percent-encoding does not decode to UTF-8');
    // No id of ours is that long, so nothing by that id exists: the answer to any unknown id.
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return contract('NOT_FOUND', `not found: an id in the URL path is longer than ${MAX_PARAM_LENGTH} characters`);
    // 431 says exactly this; the code tells contract clients that the request was too large.
    case 'HPE_HEADER_OVERFLOW':
      return { status: 431, code: 'PAYLOAD_TOO_LARGE', message: `request headers exceed ${maxHeaderSize} bytes` };
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return contract('PAYLOAD_TOO_LARGE', 'chunk extensions of the request body are too large');
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return { status: 408, code: 'VALIDATION_ERROR', message: 'the request was not received in time' };
    default:
      return code.startsWith('HPE_') ? contract('VALIDATION_ERROR', 'malformed HTTP request') : undefined;
  }
}

/**
 * Requests Node answers by itself, outside the envelope: an HTTP/1.1 request without Host (a bare
 * 400) and an Expect other than 100-continue (a bare 417). http-app.ts has Node hand them to
 * Fastify instead, where this refuses them; undefined for any other request.
 */
export function refusedByHttp(request: IncomingMessage): AppError | undefined {
  if (request.httpVersion === '1.1' && request.headers.host === undefined)
    return new ValidationError('an HTTP/1.1 request needs a Host header');
  const expect = request.headers.expect;
  if (expect !== undefined && expect.toLowerCase() !== '100-continue') {
    return new ValidationError(`Expect "${expect.slice(0, 100)}" cannot be met: only 100-continue is supported`);
  }
  return undefined;
}

/** CONNECT asks for a tunnel: Node never turns it into a request, and would drop the connection unanswered. */
export const CONNECT_REFUSED = new AppError('NOT_FOUND', 'CONNECT is not served: this is not a proxy');
