import { INestApplication } from '@nestjs/common';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import multipart from '@fastify/multipart';
import { ApiConfig } from './api.config';

/** The Fastify adapter, sized so that the create body limit is UPLOAD_MAX_BYTES. */
export const createFastifyAdapter = (config: ApiConfig): FastifyAdapter =>
  new FastifyAdapter({ bodyLimit: config.uploadMaxBytes, logger: false });

/** Plugins and the OpenAPI document (served at /api/docs, JSON at /api/docs-json). */
export async function configureHttpApp(app: NestFastifyApplication, config: ApiConfig): Promise<void> {
  await app.register(multipart, {
    limits: { fileSize: config.uploadMaxBytes, files: config.uploadMaxFiles, fields: 20, fieldSize: 1_048_576, parts: config.uploadMaxFiles + 20 },
  });
  app.enableShutdownHooks();
  setupOpenApi(app);
}

export function setupOpenApi(app: INestApplication): void {
  const document = SwaggerModule.createDocument(
    app,
    new DocumentBuilder()
      .setTitle('Agentic task service')
      .setDescription(
        'Create natural-language tasks run by an LLM agent in an isolated workspace; follow them over SSE or by polling; ' +
          'approve tool calls; send follow-ups; download artifacts. Errors: {"success":false,"error":{"code","message"}}.',
      )
      .setVersion('1')
      .addBearerAuth({ type: 'http', scheme: 'bearer', description: 'API key' })
      .build(),
  );
  SwaggerModule.setup('api/docs', app, document, { jsonDocumentUrl: 'api/docs-json' });
}
