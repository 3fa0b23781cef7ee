import 'reflect-metadata';
import type { Type } from '@nestjs/common';
import { MODULE_METADATA } from '@nestjs/common/constants';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { Test } from '@nestjs/testing';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { HTTP_STATUS_BY_CODE } from '@app/common';
import type { TaskEvent } from '@app/task-domain';
import { TASK_EVENT_SCHEMA_VERSIONS, toPublicEvent } from '@app/task-domain';
import { ApiModule } from '../../services/api/src/api.module';
import { describeFrameworkError } from '../../services/api/src/errors/framework-errors';
import { setupOpenApi } from '../../services/api/src/openapi/openapi';

// Keeps docs/api.md, the page users read, true to the code: its endpoint table against the
// OpenAPI document the service serves, its error table against the codes the code can answer
// with, its event table against the kinds the public stream can carry.

const PAGE = readFileSync(join(__dirname, '..', '..', 'docs', 'api.md'), 'utf8');
const HTTP_METHODS = ['get', 'post', 'put', 'patch', 'delete'];

/** The text under a `## heading` of the page, up to the next `## `. */
function section(heading: string): string {
  const start = PAGE.indexOf(`\n## ${heading}\n`);
  if (start < 0) throw new Error(`docs/api.md has no "## ${heading}" section`);
  const end = PAGE.indexOf('\n## ', start + 1);
  return PAGE.slice(start, end < 0 ? undefined : end);
}

/** First cells of a section's table rows that start with a code span, e.g. "GET /healthz" or "done". */
const firstCells = (text: string): string[] => [...text.matchAll(/^\| `([^`]+)` \|/gm)].map((m) => m[1]);

/**
 * The OpenAPI document exactly as /api/docs-json serves it (setupOpenApi over ApiModule's own
 * controllers), without a server: every dependency of the controllers is an empty stand-in,
 * since building the document only reads their decorators.
 */
async function servedOpenApiDocument(): Promise<{ paths: Record<string, Record<string, unknown>> }> {
  const controllers = Reflect.getMetadata(MODULE_METADATA.CONTROLLERS, ApiModule) as Type[];
  const moduleRef = await Test.createTestingModule({ controllers })
    .useMocker(() => ({}))
    .compile();
  const app = moduleRef.createNestApplication<NestFastifyApplication>(new FastifyAdapter(), { logger: false });
  try {
    setupOpenApi(app);
    await app.init();
    const response = await app.getHttpAdapter().getInstance().inject({ method: 'GET', url: '/api/docs-json' });
    return response.json();
  } finally {
    await app.close();
  }
}

describe('docs/api.md', () => {
  it('lists every route of the OpenAPI document, and no other, each with its own section', async () => {
    const document = await servedOpenApiDocument();
    const routes = Object.entries(document.paths).flatMap(([path, operations]) =>
      Object.keys(operations)
        .filter((method) => HTTP_METHODS.includes(method))
        .map((method) => `${method.toUpperCase()} ${path}`),
    );
    expect(routes.length).toBeGreaterThan(5);
    // The summary table's rows; the field tables of each endpoint's own section are not routes.
    const listed = firstCells(section('Endpoints')).filter((cell) => /^[A-Z]+ \//.test(cell));
    expect([...listed].sort()).toEqual([...routes].sort());
    const headings = [...PAGE.matchAll(/^### `([A-Z]+ \/[^`]*)`/gm)].map((m) => m[1]);
    expect([...headings].sort()).toEqual([...routes].sort());
  });

  it('has every error code in its error table, with each HTTP status the code answers it with', () => {
    const rows = [...section('Errors').matchAll(/^\| `([A-Z_]+)` \| (\d{3}) \|/gm)].map((m) => `${m[1]} ${m[2]}`);
    const fromCodes = Object.entries(HTTP_STATUS_BY_CODE).map(([code, status]) => `${code} ${status}`);
    // Errors told before any route (headers too large, a request not received in time, …).
    const beforeRouting = [
      'FST_ERR_BAD_URL',
      'FST_ERR_MAX_PARAM_LENGTH',
      'HPE_HEADER_OVERFLOW',
      'HPE_CHUNK_EXTENSIONS_OVERFLOW',
      'ERR_HTTP_REQUEST_TIMEOUT',
      'HPE_INVALID_METHOD',
    ];
    const framework = beforeRouting
      .map((code) => describeFrameworkError(Object.assign(new Error(code), { code }))!)
      .map(({ code, status }) => `${code} ${status}`);
    const missing = [...new Set([...fromCodes, ...framework])].filter((pair) => !rows.includes(pair));
    expect(missing).toEqual([]);
    const unknown = rows.filter((row) => !(row.split(' ')[0] in HTTP_STATUS_BY_CODE));
    expect(unknown).toEqual([]);
  });

  it('describes every kind of event the public stream can carry, and every notice code', () => {
    const published = Object.keys(TASK_EVENT_SCHEMA_VERSIONS).map((type) => toPublicEvent({ type, data: {} } as unknown as TaskEvent));
    const kinds = new Set(published.map((e) => e.kind));
    const listed = firstCells(section('Streaming events (SSE)'));
    expect([...new Set(listed)].sort()).toEqual([...kinds].sort());
    const noticeCodes = published.map((e) => e.data.code).filter((code): code is string => typeof code === 'string');
    expect(noticeCodes.length).toBeGreaterThan(0);
    for (const code of noticeCodes) expect(section('Streaming events (SSE)')).toContain(code);
  });
});
