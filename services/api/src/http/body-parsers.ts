import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { Server } from 'node:http';
import { ValidationError } from '@app/common';
import { exceedsJsonDepth } from './json-depth';

/** Far more than any body of the API needs (mcpServers headers sit 4 levels down), far below a stack overflow. */
export const MAX_JSON_DEPTH = 32;

/**
 * The API reads JSON, and multipart on create (@fastify/multipart). Registering the JSON parser
 * through Nest keeps Nest from adding its form-encoded one, and Fastify's text/plain parser is
 * removed: a body of any other type, or of none, is refused here with a 400 saying what to send,
 * instead of reaching a handler as a string that then "is not a JSON object" (as a 10 MB message
 * sent as text/plain did). The JSON depth is checked before JSON.parse runs.
 */
export function useBodyParsers(app: NestFastifyApplication, bodyLimit: number): void {
  const fastify = app.getHttpAdapter().getInstance();
  const parseJson = fastify.getDefaultJsonParser('error', 'error');
  app.useBodyParser<Server>('application/json', { bodyLimit }, (request, body, done) => {
    if (exceedsJsonDepth(body, MAX_JSON_DEPTH))
      return done(new ValidationError(`request body is nested deeper than ${MAX_JSON_DEPTH} levels`), undefined);
    return parseJson(request, body.toString('utf8'), done);
  });
  fastify.removeContentTypeParser('text/plain');
  // Every other type, and a body without one. The body is read (within the limit) and dropped,
  // so that a client still sending it gets this answer rather than a broken pipe.
  fastify.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit }, (request, _body, done) => {
    // An unknown route answers 404 whatever its body.
    if (request.is404) return done(null, undefined);
    const type = request.headers['content-type'];
    const got = type === undefined ? 'no Content-Type' : `Content-Type "${type.slice(0, 100)}"`;
    done(
      new ValidationError(`request body has ${got}: send application/json (POST /api/v1/tasks also takes multipart/form-data)`),
      undefined,
    );
  });
}
