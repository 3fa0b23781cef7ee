import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import multipart from '@fastify/multipart';
import { FastifyHttpOptions } from 'fastify';
import { Server } from 'node:http';
import { ApiConfig } from './api.config';
import { AppExceptionFilter } from './errors/app-exception.filter';
import { CONNECT_REFUSED, MAX_PARAM_LENGTH, refusedByHttp } from './errors/framework-errors';
import { useBodyParsers } from './http/body-parsers';
import { releaseMultipartParserOnFinish } from './http/multipart-stall';
import { setupOpenApi } from './openapi/openapi';

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
    logger: false,
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    frameworkErrors: (error, request, reply) => errors.respond(error, request, reply),
    clientErrorHandler: (error, socket) => errors.respondOnSocket(error, socket),
    // Node would answer a request without Host with a bare 400: let it through, refused below.
    http: { requireHostHeader: false },
  };
  const adapter = new FastifyAdapter(options);
  const fastify = adapter.getInstance();
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

/** Body parsers, plugins and the OpenAPI document (served at /api/docs, JSON at /api/docs-json). */
export async function configureHttpApp(app: NestFastifyApplication, config: ApiConfig): Promise<void> {
  useBodyParsers(app, config.uploadMaxBytes);
  // One file over UPLOAD_MAX_FILES is let through so that the parser's own check refuses it: at
  // busboy's limit it would destroy the file still being written, mid-pipe.
  const files = config.uploadMaxFiles + 1;
  releaseMultipartParserOnFinish();
  await app.register(multipart, {
    limits: { fileSize: config.uploadMaxBytes, files, fields: 20, fieldSize: 1_048_576, parts: files + 20 },
  });
  app.enableShutdownHooks();
  setupOpenApi(app);
}
