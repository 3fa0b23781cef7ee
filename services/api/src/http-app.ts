import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import multipart from '@fastify/multipart';
import { ApiConfig } from './api.config';
import { useBodyParsers } from './http/body-parsers';
import { setupOpenApi } from './openapi/openapi';

/** The Fastify adapter, sized so that the create body limit is UPLOAD_MAX_BYTES. */
export const createFastifyAdapter = (config: ApiConfig): FastifyAdapter =>
  new FastifyAdapter({ bodyLimit: config.uploadMaxBytes, logger: false });

/** Body parsers, plugins and the OpenAPI document (served at /api/docs, JSON at /api/docs-json). */
export async function configureHttpApp(app: NestFastifyApplication, config: ApiConfig): Promise<void> {
  useBodyParsers(app, config.uploadMaxBytes);
  // One file over UPLOAD_MAX_FILES is let through so that the parser's own check refuses it: at
  // busboy's limit it would destroy the file still being written, mid-pipe.
  const files = config.uploadMaxFiles + 1;
  await app.register(multipart, { limits: { fileSize: config.uploadMaxBytes, files, fields: 20, fieldSize: 1_048_576, parts: files + 20 } });
  app.enableShutdownHooks();
  setupOpenApi(app);
}
