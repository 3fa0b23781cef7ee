import type { INestApplication } from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { OpenAPIObject } from '@nestjs/swagger';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { completeDocument } from './complete-document';

const UI_ASSETS: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'application/javascript; charset=utf-8',
  'swagger-ui-standalone-preset.js': 'application/javascript; charset=utf-8',
};

/**
 * The OpenAPI document, generated from the controllers and DTOs: JSON at /api/docs-json, a
 * Swagger UI page at /api/docs. The UI's three files are served straight from swagger-ui-dist
 * rather than through @fastify/static, whose ESM-only dependencies jest cannot load.
 */
export function setupOpenApi(app: NestFastifyApplication): void {
  // A factory: SwaggerModule builds the document at the first /api/docs-json request and keeps it,
  // instead of every start scanning every controller and DTO for it (BENCHMARKS.md, "Footprint").
  SwaggerModule.setup('api/docs', app, () => buildOpenApiDocument(app), { ui: false, raw: ['json'], jsonDocumentUrl: 'api/docs-json' });

  const fastify = app.getHttpAdapter().getInstance();
  // The package's small absolute-path module, not its index: that one evaluates the whole Swagger
  // UI bundle, a few hundred ms of every start (BENCHMARKS.md, "Footprint").
  const assetsDir = (createRequire(__filename)('swagger-ui-dist/absolute-path.js') as () => string)();
  fastify.get('/api/docs', async (_request, reply) => reply.type('text/html; charset=utf-8').send(UI_PAGE));
  for (const [file, type] of Object.entries(UI_ASSETS)) {
    fastify.get(`/api/docs/${file}`, async (_request, reply) => reply.type(type).send(await readFile(join(assetsDir, file))));
  }
}

/** The complete document of the app's controllers; also what scripts/write-openapi.ts writes to docs/openapi.json. */
export function buildOpenApiDocument(app: INestApplication): OpenAPIObject {
  const generated = SwaggerModule.createDocument(
    app,
    new DocumentBuilder()
      .setTitle('Agentic task service')
      .setDescription(
        'Create natural-language tasks run by an LLM agent in an isolated workspace; follow them over SSE or by polling; ' +
          'approve tool calls; send follow-ups; download artifacts. Errors: {"success":false,"error":{"code","message"}}. ' +
          'Bodies are application/json (multipart/form-data on create); any other type is a 400 VALIDATION_ERROR, as are JSON ' +
          'nested deeper than 32 levels and a NUL or lone UTF-16 surrogate in any text field. Headers over 16 KiB answer 431 ' +
          "with code PAYLOAD_TOO_LARGE and close the connection. Every answer carries X-Request-ID: the request's own " +
          "X-Request-ID when it is 1 to 128 letters, digits or ._:- characters, else a new UUID; the service's log lines " +
          'about the request carry the same id.',
      )
      .setVersion('1')
      .addServer('http://127.0.0.1:3000', 'the default address of a local service (HOST, PORT)')
      .addTag('tasks', 'Create, list, read, continue and cancel tasks.')
      .addTag('stream', "Follow a task's events over Server-Sent Events.")
      .addTag('approvals', 'Decide tool calls of tasks created with autoExecute: false.')
      .addTag('artifacts', 'The files the agent wrote under downloads/.')
      .addTag('health', 'Liveness, no authentication.')
      .build(),
  );
  // package.json's license: a proprietary service, no license text to link to.
  generated.info.license = { name: 'UNLICENSED' };
  return completeDocument(generated);
}

const UI_PAGE = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Agentic task service API</title><link rel="stylesheet" href="/api/docs/swagger-ui.css"></head>
<body><div id="swagger-ui"></div>
<script src="/api/docs/swagger-ui-bundle.js"></script>
<script src="/api/docs/swagger-ui-standalone-preset.js"></script>
<script>window.ui = SwaggerUIBundle({ url: '/api/docs-json', dom_id: '#swagger-ui', presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset], layout: 'StandaloneLayout' });</script>
</body></html>`;
