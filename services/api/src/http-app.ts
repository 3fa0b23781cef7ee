import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import multipart from '@fastify/multipart';
import type { FastifyHttpOptions } from 'fastify';
import type { Server } from 'node:http';
import type { ApiConfig } from './api.config';
import { AppExceptionFilter } from './errors/app-exception.filter';
import { CONNECT_REFUSED, MAX_PARAM_LENGTH, refusedByHttp } from './errors/framework-errors';
import { useBodyParsers } from './http/body-parsers';
import { REQUEST_ID_HEADER, logRequestContext, requestIdOf } from './http/request-log-context';
import { recordRequestMetrics } from './http/request-metrics';
import { recordFollowUpArrivals } from './messages/send-follow-up/follow-up-arrival';
import { traceRequests } from './http/request-spans';
import { OpenStreams } from './events-stream/open-streams';
import { setupOpenApi } from './openapi/openapi';
import { serveConsole } from './console/serve-console';

/**
 * The Fastify adapter, sized so that the create body limit is UPLOAD_MAX_BYTES. Errors Fastify
 * and Node answer before any route (a bad URL, an over-long id, headers too large, not HTTP, no
 * Host, an Expect other than 100-continue, CONNECT) would bypass Nest's filter; they are handed
 * to the same filter instead.
 */
export function createFastifyAdapter(config: ApiConfig): FastifyAdapter {
  const errors = new AppExceptionFilter();
  const options: FastifyHttpOptions<Server> = {
    bodyLimit: config.uploadMaxBytes,
    // Fastify's own request logging stays off: ours (request-log-context) goes through the service's logger.
    logger: false,
    genReqId: requestIdOf,
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    // Refused before routing, so before the onRequest hook that sets X-Request-ID on every other answer.
    frameworkErrors: (error, request, reply) => errors.respond(error, request, reply.header(REQUEST_ID_HEADER, request.id)),
    clientErrorHandler: (error, socket) => errors.respondOnSocket(error, socket),
    // Fastify sets Node's requestTimeout from its own option (its default 0 would turn it off);
    // `http` repeats it because Node checks headersTimeout against it when creating the server.
    requestTimeout: config.httpRequestTimeoutMs,
    // A request arriving on a kept-alive connection while the server closes is served (its
    // connection closed after the answer) rather than answered Fastify's own 503 body, which is
    // not this API's error envelope; /readyz already tells the balancer to send nothing more.
    return503OnClosing: false,
    http: {
      // Node would answer a request without Host with a bare 400: let it through, refused below.
      requireHostHeader: false,
      headersTimeout: config.httpHeadersTimeoutMs,
      requestTimeout: config.httpRequestTimeoutMs,
      connectionsCheckingInterval: timeoutCheckInterval(config),
    },
  };
  const adapter = new FastifyAdapter(options);
  const fastify = adapter.getInstance();
  logRequestContext(fastify);
  // An Expect other than 100-continue: Node's bare 417 unless it is handed on as a request.
  fastify.server.on('checkExpectation', (request, response) => fastify.server.emit('request', request, response));
  fastify.server.on('connect', (_request, socket) => errors.respondOnSocket(CONNECT_REFUSED, socket));
  fastify.addHook('onRequest', (request, reply, done) => {
    const refused = refusedByHttp(request.raw);
    if (refused) return errors.respond(refused, request, reply);
    done();
  });
  return adapter;
}

/**
 * How often Node looks for requests past HTTP_HEADERS_TIMEOUT_MS or HTTP_REQUEST_TIMEOUT_MS: a
 * timeout fires up to this much late. Node's 30 s default would let a 60 s headers timeout run to
 * 90 s. Each second (a quarter of a shorter headers timeout, the shorter of the two) costs little:
 * a check walks only the connections in the middle of receiving a request.
 */
const timeoutCheckInterval = (config: ApiConfig): number => Math.max(1, Math.min(1_000, Math.floor(config.httpHeadersTimeoutMs / 4)));

/**
 * Body parsers, plugins, the OpenAPI document (served at /api/docs, JSON at /api/docs-json), the
 * web console (/console), and how the server closes. The entry points install the signal handler
 * (closeOnShutdownSignals): tests that run the app in their own process close it themselves.
 */
export async function configureHttpApp(app: NestFastifyApplication, config: ApiConfig): Promise<void> {
  closeStreamsOnClose(app);
  recordRequestMetrics(app);
  recordFollowUpArrivals(app);
  await traceRequests(app);
  useBodyParsers(app, config.uploadMaxBytes);
  // One file over UPLOAD_MAX_FILES is let through so that the parser's own check refuses it: at
  // busboy's limit it would destroy the file still being written, mid-pipe.
  const files = config.uploadMaxFiles + 1;
  await app.register(multipart, {
    limits: { fileSize: config.uploadMaxBytes, files, fields: 20, fieldSize: 1_048_576, parts: files + 20 },
  });
  setupOpenApi(app);
  await serveConsole(app);
}

/** How often a closing server drops connections that have gone idle since the last look. */
const IDLE_SWEEP_MS = 100;

/**
 * When the server closes (Fastify's preClose: it is about to stop listening, and answers each
 * request with `Connection: close`) every open SSE stream is ended with a comment telling its
 * client to reconnect (one opened later is ended at once), and connections are dropped as soon
 * as they idle: a request in flight finishes, but its kept-alive connection would otherwise
 * hold the close up until its keep-alive timeout.
 */
function closeStreamsOnClose(app: NestFastifyApplication): void {
  const fastify = app.getHttpAdapter().getInstance();
  fastify.addHook('preClose', (done) => {
    app.get(OpenStreams, { strict: false }).endAll();
    const server = fastify.server;
    const sweep = setInterval(() => server.closeIdleConnections(), IDLE_SWEEP_MS);
    server.once('close', () => clearInterval(sweep));
    done();
  });
}
