import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { Span, SpanStatus } from '@opentelemetry/api';
import { context } from '@opentelemetry/api';
import { runningOtelSdk } from '@app/tracing';

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
 * A server span per request, made by `@fastify/otel`: the root of the trace of whatever the
 * request starts (a turn), unless the caller sent a W3C `traceparent` to continue. Named by method
 * and route template (`POST /api/v1/tasks/:id/messages`; the library names it `request`): the path
 * itself, query and body never become attributes. Only the request span: the library's span per
 * hook and per handler are off (the handler's: +18 % CPU per request, measured in
 * docs/operations/observability.md, "Tracing"), so the handler is put in the request's context
 * here. Registered only while tracing is on: off, the package is not even loaded. Probes get none.
 */
export async function traceRequests(app: NestFastifyApplication): Promise<void> {
  if (!runningOtelSdk()) return;
  const { FastifyOtelInstrumentation } = await import('@fastify/otel');
  const instrumentation = new FastifyOtelInstrumentation({
    // Called with a route's template when it is added, and with the raw URL of each request.
    ignorePaths: ({ url }) => UNTRACED_ROUTES.has(pathOf(url)),
    instrumentHooks: false,
    instrumentHandler: false,
    // An exception's message and stack can quote a body (JSON.parse's does) or a secret.
    recordExceptions: false,
    requestHook: (span, request) => {
      const route = request.routeOptions.url ?? 'unmatched';
      span.updateName(`${request.method} ${route}`);
      // In place of the raw URL (query included) the library puts there.
      span.setAttribute('url.path', route);
      keepStatusWithoutMessage(span);
      traceIds.set(request, span.spanContext().traceId);
    },
  });
  await app.register(instrumentation.plugin());
  // The body is read in the socket's callbacks, outside the span's context: the handler, and
  // everything it awaits (appends, bus messages), is put back in it.
  const fastify = app.getHttpAdapter().getInstance();
  fastify.addHook('preHandler', (request, _reply, done) => {
    const ctx = request.opentelemetry().context;
    return ctx ? context.with(ctx, done) : done();
  });
}

/** The library sets a failed request's status message to the error's, which can quote the body: dropped. */
function keepStatusWithoutMessage(span: Span): void {
  const setStatus = span.setStatus.bind(span);
  span.setStatus = (status: SpanStatus) => setStatus({ code: status.code });
}

/** The path without its query. */
const pathOf = (url: string): string => url.split('?', 1)[0];
