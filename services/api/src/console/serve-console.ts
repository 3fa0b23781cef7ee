import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyReply } from 'fastify';
import { NotFoundError } from '@app/common';
import type { ConsoleBuild } from './console-assets';
import { consoleBuildDir, loadConsoleBuild } from './console-assets';

/**
 * The console may load only its own files and talk only to this origin: no inline script (an
 * agent's output rendered as HTML by mistake could not run), no third-party origin, no framing.
 * Artifact previews show images through blob: URLs made from authenticated downloads.
 */
export const CONSOLE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' blob:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/** Asset names carry a content hash: a new build gets new names, so browsers may keep them forever. */
const IMMUTABLE = 'public, max-age=31536000, immutable';

/**
 * GET /console: the web console's page (revalidated on every load, so a new build is picked up at
 * once) and its hashed assets. The page itself holds no data: every call it makes carries the
 * API key the user typed, so these routes need none.
 */
export async function serveConsole(app: NestFastifyApplication, buildDir = consoleBuildDir()): Promise<void> {
  const build = await loadConsoleBuild(buildDir);
  const fastify = app.getHttpAdapter().getInstance();
  const page = async (_request: unknown, reply: FastifyReply) => sendPage(reply, build);
  fastify.get('/console', page);
  fastify.get('/console/', page);
  fastify.get<{ Params: { name: string } }>('/console/assets/:name', async (request, reply) => {
    const asset = build?.assets.get(request.params.name);
    secureHeaders(reply);
    if (!asset) {
      // A route of Fastify's own, outside Nest's filter: its 404 is written in the same envelope.
      const notFound = new NotFoundError('console asset');
      return reply
        .code(404)
        .type('application/json; charset=utf-8')
        .header('cache-control', 'no-store')
        .send({ success: false, error: { code: notFound.code, message: notFound.message } });
    }
    return reply.type(asset.type).header('cache-control', IMMUTABLE).send(asset.body);
  });
}

function sendPage(reply: FastifyReply, build: ConsoleBuild | undefined): FastifyReply {
  secureHeaders(reply);
  if (!build) {
    return reply
      .code(503)
      .type('text/plain; charset=utf-8')
      .header('cache-control', 'no-store')
      .send('The web console is not built: run `npm run build:console` (npm start does it).');
  }
  return reply.type('text/html; charset=utf-8').header('cache-control', 'no-cache').send(build.index);
}

function secureHeaders(reply: FastifyReply): void {
  reply
    .header('content-security-policy', CONSOLE_CSP)
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'no-referrer')
    .header('x-frame-options', 'DENY');
}
