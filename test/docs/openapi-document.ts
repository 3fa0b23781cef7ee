import 'reflect-metadata';
import type { Type } from '@nestjs/common';
import { MODULE_METADATA } from '@nestjs/common/constants';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { Test } from '@nestjs/testing';
import type { OpenAPIObject } from '@nestjs/swagger';
import { ApiModule } from '../../services/api/src/api.module';
import { buildOpenApiDocument } from '../../services/api/src/openapi/openapi';

/**
 * The OpenAPI document of ApiModule's own controllers, as /api/docs-json serves it, without a
 * server: every dependency of the controllers is an empty stand-in, since building the document
 * only reads their decorators. scripts/write-openapi.ts writes it to docs/openapi.json.
 */
export async function openApiDocument(): Promise<OpenAPIObject> {
  const controllers = Reflect.getMetadata(MODULE_METADATA.CONTROLLERS, ApiModule) as Type[];
  const moduleRef = await Test.createTestingModule({ controllers })
    .useMocker(() => ({}))
    .compile();
  const app = moduleRef.createNestApplication<NestFastifyApplication>(new FastifyAdapter(), { logger: false });
  try {
    return buildOpenApiDocument(app);
  } finally {
    await app.close();
  }
}

/** The text of docs/openapi.json: the document, two-space JSON and a final newline. */
export const openApiFileText = (document: OpenAPIObject): string => `${JSON.stringify(document, null, 2)}\n`;
