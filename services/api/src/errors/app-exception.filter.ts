import { ArgumentsHost, Catch, ExceptionFilter, HttpException, Logger } from '@nestjs/common';
import { AppError, ErrorCode, HTTP_STATUS_BY_CODE, RateLimitedError } from '@app/common';
import { RemoteError } from '@app/bus';
import { ExpectedRevisionConflictError } from '@app/event-store';
import { FastifyReply, FastifyRequest } from 'fastify';
import { STATUS_CODES } from 'node:http';
import { Duplex } from 'node:stream';
import { ErrorResponse, describeFrameworkError } from './framework-errors';

const CODE_BY_STATUS: Record<number, ErrorCode> = {
  400: 'VALIDATION_ERROR',
  401: 'AUTH_REQUIRED',
  404: 'NOT_FOUND',
  409: 'CONFLICT',
  413: 'PAYLOAD_TOO_LARGE',
  415: 'VALIDATION_ERROR',
  429: 'RATE_LIMITED',
};

/**
 * The one place where errors become HTTP: `{success:false, error:{code, message}}`. Nest calls
 * `catch`; Fastify's `frameworkErrors` and `clientErrorHandler` (http-app.ts), which run before
 * any route, call `respond` and `respondOnSocket`.
 */
@Catch()
export class AppExceptionFilter implements ExceptionFilter {
  private readonly logger = new Logger('Errors');

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    this.respond(exception, http.getRequest<FastifyRequest>(), http.getResponse<FastifyReply>());
  }

  respond(exception: unknown, request: FastifyRequest, reply: FastifyReply): void {
    const { status, code, message } = this.describe(exception);
    if (reply.sent || reply.raw.headersSent) return;
    // Its reader gave up on a body still arriving: Node drains only bodies nobody read, so the
    // connection would wait forever for the rest to be read and answer no next request. A body
    // refused as too large before it all arrived is not worth draining either.
    if (bodyAbandoned(request) || (status === 413 && bodyPending(request))) void reply.header('connection', 'close');
    if (exception instanceof RateLimitedError) void reply.header('retry-after', String(exception.retryAfterSeconds));
    void reply.status(status).header('content-type', 'application/json; charset=utf-8').send({ success: false, error: { code, message } });
  }

  /** Node's HTTP parser failed (headers too large, not HTTP): no request or reply exists, only the socket. */
  respondOnSocket(exception: NodeJS.ErrnoException, socket: Duplex): void {
    if (exception.code === 'ECONNRESET' || socket.destroyed) return;
    const { status, code, message } = this.describe(exception);
    const body = JSON.stringify({ success: false, error: { code, message } });
    if (!socket.writable) return void socket.destroy();
    socket.end(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
      () => socket.destroy(),
    );
  }

  private describe(exception: unknown): ErrorResponse {
    if (exception instanceof ExpectedRevisionConflictError) {
      return { status: 409, code: 'CONFLICT', message: 'The task changed concurrently; retry the request' };
    }
    if (exception instanceof AppError) return { status: HTTP_STATUS_BY_CODE[exception.code], code: exception.code, message: exception.message };
    if (exception instanceof RemoteError && exception.remoteCode in HTTP_STATUS_BY_CODE && exception.remoteCode !== 'INTERNAL') {
      const code = exception.remoteCode as ErrorCode;
      return { status: HTTP_STATUS_BY_CODE[code], code, message: exception.message };
    }
    if (exception instanceof HttpException) {
      const status = exception.getStatus();
      const code = CODE_BY_STATUS[status];
      if (code) return { status: HTTP_STATUS_BY_CODE[code], code, message: exception.message };
    }
    const framework = describeFrameworkError(exception);
    if (framework) return framework;
    const fastifyStatus = (exception as { statusCode?: number }).statusCode;
    if (fastifyStatus && CODE_BY_STATUS[fastifyStatus]) {
      const code = CODE_BY_STATUS[fastifyStatus];
      return { status: HTTP_STATUS_BY_CODE[code], code, message: (exception as Error).message };
    }
    // Never echo an unexpected error: it may carry internals. Log it, answer generically.
    this.logger.error(exception instanceof Error ? `${exception.name}: ${exception.message}` : String(exception));
    return { status: 500, code: 'INTERNAL', message: 'Internal error' };
  }
}

/**
 * A body was being read (a multipart upload refused midway) and has not all arrived. A body
 * nobody read is left to Node, which reads and drops it, so the client still sending it gets the
 * answer and the connection stays usable. `complete` is also false while a bodyless request is
 * handled synchronously, hence the header check.
 */
function bodyAbandoned(request: FastifyRequest): boolean {
  return bodyPending(request) && request.raw.readableDidRead;
}

/** The request has a body, and not all of it has arrived. */
function bodyPending(request: FastifyRequest): boolean {
  const { headers, complete } = request.raw;
  const hasBody = headers['transfer-encoding'] !== undefined || (headers['content-length'] ?? '0') !== '0';
  return hasBody && !complete;
}
