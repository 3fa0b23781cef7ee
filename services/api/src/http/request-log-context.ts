import { Logger } from '@nestjs/common';
import { trace } from '@opentelemetry/api';
// Types only: `import type` keeps fastify out of the compiled code's requires.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { IncomingMessage } from 'node:http';
import { randomUUID } from 'node:crypto';
import type { LogContext } from '@app/common';
import { runWithLogContext } from '@app/common';
import { requestTraceId } from './request-spans';

export const REQUEST_ID_HEADER = 'x-request-id';
/** A caller's own id is kept if it is this plain and short; anything else is replaced (it ends up in every log line). */
const ACCEPTED_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
/** Routes under this prefix name their task in `:id`. */
const TASK_ROUTE = '/api/v1/tasks/:id';

/** The id of a request: the caller's `X-Request-ID` (from a proxy in front, say), or a new UUID. */
export function requestIdOf(raw: IncomingMessage): string {
  const given = raw.headers[REQUEST_ID_HEADER];
  return typeof given === 'string' && ACCEPTED_REQUEST_ID.test(given) ? given : randomUUID();
}

/**
 * Every log line written while a request is handled carries its request id (and, on task routes,
 * the task id); the answer carries the id back in `X-Request-ID`, so a caller can quote it. With
 * LOG_LEVEL=debug each answered request is logged too: method, path, route, status, duration,
 * and the request's own trace id. A response may end in another trace's context (an SSE stream
 * ends when its turn's `done` is delivered, inside the turn's trace): that one is `turnTraceId`.
 */
export function logRequestContext(fastify: FastifyInstance): void {
  const contexts = new WeakMap<FastifyRequest, LogContext>();
  const logger = new Logger('Http');
  fastify.addHook('onRequest', (request, reply, done) => {
    const context: LogContext = { requestId: request.id };
    const taskId = (request.params as { id?: unknown } | undefined)?.id;
    if (request.routeOptions.url?.startsWith(TASK_ROUTE) && typeof taskId === 'string') context.taskId = taskId;
    contexts.set(request, context);
    // On the raw response: a hijacked reply (a stream) writes its own head, which then includes it.
    reply.raw.setHeader(REQUEST_ID_HEADER, request.id);
    runWithLogContext(context, done);
  });
  // The body is read in the socket's callbacks, outside the scope: the rest of the request is put back in it.
  fastify.addHook('preValidation', (request, _reply, done) => {
    const context = contexts.get(request);
    return context ? runWithLogContext(context, done) : done();
  });
  fastify.addHook('onResponse', (request, reply, done) => {
    const context = contexts.get(request);
    if (context) {
      const traceId = requestTraceId(request);
      const activeTraceId = trace.getActiveSpan()?.spanContext().traceId;
      runWithLogContext(context, () =>
        logger.debug({
          msg: `${request.method} ${pathOf(request.url)} ${reply.statusCode} in ${Math.round(reply.elapsedTime)} ms`,
          method: request.method,
          route: request.routeOptions.url ?? 'unmatched',
          status: reply.statusCode,
          durationMs: Math.round(reply.elapsedTime * 10) / 10,
          ...(traceId ? { traceId } : {}),
          ...(activeTraceId && activeTraceId !== traceId ? { turnTraceId: activeTraceId } : {}),
        }),
      );
    }
    done();
  });
}

/** The path without its query: a query may carry anything a client put in it. */
const pathOf = (url: string): string => url.split('?', 1)[0];
