import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { Span } from '@opentelemetry/api';
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, context, propagation, trace } from '@opentelemetry/api';
import { ATTR, runningOtelSdk, tracer } from '@app/tracing';

const spans = new WeakMap<object, Span>();
/** Kept past the span's end: the request's log line is written after it (see requestTraceId). */
const traceIds = new WeakMap<object, string>();

/** The trace id of a request's own span, while tracing is on. */
export function requestTraceId(request: object): string | undefined {
  return traceIds.get(request);
}

/**
 * Probes and scrapes: a balancer and Prometheus call them every few seconds, and a trace each
 * would bury the turns' traces in noise. Their duration is still in the request histogram.
 */
const UNTRACED_ROUTES: ReadonlySet<string> = new Set(['/healthz', '/readyz', '/metrics']);

/**
 * A server span per request, the root of the trace of whatever the request starts (a turn),
 * unless the caller sent a W3C `traceparent` to continue. Named by method and route template
 * (`POST /api/v1/tasks/:id/messages`): the path itself, query and body never become attributes.
 * Registered only while tracing is on: off, requests pay nothing for it. Probes get none.
 */
export function traceRequests(app: NestFastifyApplication): void {
  if (!runningOtelSdk()) return;
  const fastify = app.getHttpAdapter().getInstance();
  fastify.addHook('onRequest', (request, _reply, done) => {
    const route = request.routeOptions.url ?? 'unmatched';
    if (UNTRACED_ROUTES.has(route)) return done();
    const carried = propagation.extract(ROOT_CONTEXT, request.headers);
    const attributes = { [ATTR.httpMethod]: request.method, [ATTR.httpRoute]: route };
    const span = tracer().startSpan(`${request.method} ${route}`, { kind: SpanKind.SERVER, attributes }, carried);
    spans.set(request, span);
    traceIds.set(request, span.spanContext().traceId);
    done();
  });
  // The handler runs from here on: everything it awaits (appends, bus messages) is in the span.
  fastify.addHook('preHandler', (request, _reply, done) => {
    const span = spans.get(request);
    if (!span) return done();
    context.with(trace.setSpan(ROOT_CONTEXT, span), done);
  });
  fastify.addHook('onResponse', (request, reply, done) => {
    const span = spans.get(request);
    if (span) {
      span.setAttribute(ATTR.httpStatus, reply.statusCode);
      if (reply.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
      spans.delete(request);
    }
    done();
  });
}
