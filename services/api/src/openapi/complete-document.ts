import type { OpenAPIObject } from '@nestjs/swagger';
import { eventSchemas } from './event-schemas';
import { ERROR_RESPONSES, OPERATIONS } from './operations';
import { SCHEMAS } from './schemas';

const HTTP_METHODS = ['get', 'post', 'put', 'patch', 'delete'];

/**
 * Adds to the document @nestjs/swagger generates from the controllers what its decorators cannot
 * say about plain-object answers: every response with its schema, the operation ids, the schemas of
 * the stream's events, and an API-key bearer scheme (no JWT format: the key is opaque).
 * An operation missing from OPERATIONS, or an entry of OPERATIONS with no route, is an error.
 */
export function completeDocument(document: OpenAPIObject): OpenAPIObject {
  const seen = new Set<string>();
  for (const [path, item] of Object.entries(document.paths)) {
    for (const method of HTTP_METHODS) {
      const operation = (item as Record<string, Record<string, unknown> | undefined>)[method];
      if (!operation) continue;
      const key = `${method.toUpperCase()} ${path}`;
      const answers = OPERATIONS[key];
      if (!answers) throw new Error(`OpenAPI: no answers declared for ${key} (services/api/src/openapi/operations.ts)`);
      seen.add(key);
      operation.operationId = answers.operationId;
      operation.responses = answers.responses;
      if (answers.requestContent) {
        const body = operation.requestBody as { content: Record<string, unknown> };
        body.content = { ...body.content, ...answers.requestContent };
      }
      if (path.startsWith('/api/v1/')) operation.security = [{ bearer: [] }];
      else operation.security = [];
    }
  }
  const unrouted = Object.keys(OPERATIONS).filter((key) => !seen.has(key));
  if (unrouted.length > 0) throw new Error(`OpenAPI: answers declared for routes that do not exist: ${unrouted.join(', ')}`);
  document.components = {
    ...document.components,
    schemas: { ...document.components?.schemas, ...SCHEMAS, ...eventSchemas() },
    responses: ERROR_RESPONSES,
    securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'An API key (opaque, not a JWT): `Bearer <key>`.' } },
  };
  return document;
}
