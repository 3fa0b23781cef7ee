import { ArgumentsHost, Catch, ExceptionFilter, HttpException, Logger } from '@nestjs/common';
import { ErrorCode, HTTP_STATUS_BY_CODE, RateLimitedError } from '@app/common';
import { FastifyReply, FastifyRequest } from 'fastify';
import { STATUS_CODES } from 'node:http';
import { Duplex } from 'node:stream';
import { ErrorResponse, describeFrameworkError } from './framework-errors';
import { publicErrorOf } from './public-error';

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
    if (bodyPending(request)) {
      // A small rest is read and dropped while the answer goes out: a client still sending its
      // body gets the answer instead of a broken pipe, and the connection stays usable.
      if (smallRest(request)) drainRest(request);
      // Its reader gave up on a big or endless body still arriving: Node drains only bodies
      // nobody read, so the connection would wait for the rest forever. A body refused as too
      // large is not worth receiving either: the connection closes after the answer, lingering.
      else if (bodyAbandoned(request) || status === 413) {
        // Fastify marks its body parsers' errors `Connection: close`, which would close at once.
        void reply.removeHeader('connection');
        closeLingering(request, reply);
      }
    }
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
    const known = publicErrorOf(exception);
    if (known) return { status: HTTP_STATUS_BY_CODE[known.code], ...known };
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

/** A declared body this small is drained rather than cut off; a chunked one never is (its size is unknown). */
const DRAIN_MAX_BYTES = 4 * 1024 * 1024;
/** A client that stops sending the rest of a drained body loses its connection after this long. */
const DRAIN_TIMEOUT_MS = 10_000;

function smallRest(request: FastifyRequest): boolean {
  const declared = Number(request.raw.headers['content-length']);
  return request.raw.headers['transfer-encoding'] === undefined && Number.isFinite(declared) && declared <= DRAIN_MAX_BYTES;
}

/** Reads what is left of the body and drops it, detached from whoever was reading it, within a time bound. */
function drainRest(request: FastifyRequest): void {
  const raw = request.raw;
  raw.unpipe();
  raw.on('data', () => undefined);
  raw.resume();
  const timer = setTimeout(() => raw.socket.destroy(), DRAIN_TIMEOUT_MS);
  timer.unref();
  raw.once('end', () => clearTimeout(timer));
  raw.once('close', () => clearTimeout(timer));
}

/**
 * After a refused big body: how long and how much of its rest is read and dropped before the
 * connection closes. A client piping a file over loopback sent up to 11 MiB more before it read
 * the answer (services/api/test/hostile-input.e2e-spec.ts); 64 MiB leaves it room, and no client
 * makes the service read more than that per refused request.
 */
const LINGER_MS = 5_000;
const LINGER_MAX_BYTES = 64 * 1024 * 1024;

/**
 * Closes the connection after the answer the way web servers do ("lingering close"): the answer,
 * then our half of the connection (FIN), while the rest of the body is still read and dropped for
 * up to LINGER_MS and LINGER_MAX_BYTES, then the socket. Closing it at once, with the client's
 * bytes still arriving, resets the connection, and a client busy writing (Node's http client
 * piping a file) failed with EPIPE before it read the answer. The answer carries no
 * `Connection: close`: Node destroys such a response's socket as soon as it is written, with no
 * way to linger; the client learns of the close from the FIN right after the answer.
 */
function closeLingering(request: FastifyRequest, reply: FastifyReply): void {
  const raw = request.raw;
  const socket = raw.socket;
  let answered = false;
  let over = false;
  let dropped = 0;
  const close = () => {
    clearTimeout(timer);
    socket.destroy();
  };
  // The body is over (or past the bound): close, but never before the answer is out.
  const closeOnceAnswered = () => {
    over = true;
    if (answered) close();
    else raw.pause();
  };
  const timer = setTimeout(close, LINGER_MS);
  timer.unref();
  socket.once('close', () => clearTimeout(timer));
  raw.unpipe();
  raw.on('data', (chunk: Buffer) => {
    dropped += chunk.length;
    if (dropped > LINGER_MAX_BYTES) closeOnceAnswered();
  });
  raw.once('end', closeOnceAnswered);
  raw.resume();
  reply.raw.once('finish', () => {
    answered = true;
    // Node's http server keeps its sockets half-open (allowHalfOpen): after end() the body still arrives.
    if (over) close();
    else socket.end();
  });
}

/** The request has a body, and not all of it has arrived. */
function bodyPending(request: FastifyRequest): boolean {
  const { headers, complete } = request.raw;
  const hasBody = headers['transfer-encoding'] !== undefined || (headers['content-length'] ?? '0') !== '0';
  return hasBody && !complete;
}
