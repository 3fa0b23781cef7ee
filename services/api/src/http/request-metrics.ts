import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { ServiceMetrics } from '@app/metrics';

/** What requests that matched no route are labelled with: their paths are anyone's, and unbounded. */
const UNMATCHED_ROUTE = 'unmatched';

/**
 * Times every answered request into `ats_http_request_duration_seconds`, labelled with the route
 * template (`/api/v1/tasks/:id`), never the path itself: ids would make the series unbounded.
 * Streams (hijacked replies) are counted by `ats_sse_connections` instead.
 */
export function recordRequestMetrics(app: NestFastifyApplication): void {
  const histogram = app.get(ServiceMetrics).httpRequestDuration;
  app
    .getHttpAdapter()
    .getInstance()
    .addHook('onResponse', (request, reply, done) => {
      const route = request.routeOptions.url ?? UNMATCHED_ROUTE;
      histogram.observe({ method: request.method, route, status: String(reply.statusCode) }, reply.elapsedTime / 1000);
      done();
    });
}
