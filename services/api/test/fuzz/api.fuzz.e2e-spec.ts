import fc from 'fast-check';
import { randomBytes } from 'node:crypto';
import type { Harness } from '../../../../test/support/service-harness';
import { API_KEY, OTHER_API_KEY, startHarness, waitFor } from '../../../../test/support/service-harness';
import type { ChatCompletionsBody, ScriptedReply } from '@app/model-provider/testing/scripted-openai-server';
import type { WebhookReceiver } from '@app/webhooks/testing/webhook-receiver';
import { startWebhookReceiver } from '@app/webhooks/testing/webhook-receiver';
import type { Endpoint, FuzzRequest, WireRequest } from './request-arbitraries';
import { ENDPOINTS, hostileRequest, toWire } from './request-arbitraries';
import { oracleRequest } from './oracle-requests';
import { expectationBreach, STATUSES_OF_CODE } from './expected-answer';
import { RealIds } from './real-ids';
import type { RawExchange, RawResponse } from './raw-http-client';
import { rawExchange } from './raw-http-client';

// Property-based fuzz of the whole HTTP API (docs/contributing.md "Tests"): generated requests to every
// endpoint, unknown routes and bytes that are not HTTP, each sent over a raw socket to the real
// all-in-one service. After every one: never a 5xx, never a hang or a dropped connection, every
// error in the contract's envelope with the status of its code, every success in its shape, no
// 2xx without a valid key or on another tenant's task. Requests whose answer the contract fixes
// are mixed in (oracle-requests.ts): valid ones on real tasks, real pending tool calls, real
// artifacts and real webhook deliveries must get their route's success status, and ones with a
// single defect must get that defect's error code; every endpoint's success must come at least once.
//
//   FUZZ_SEED=<n>            replay a run (the seed is printed first; fast-check prints it on failure)
//   FUZZ_PATH=<path>         with FUZZ_SEED, replay just the counterexample fast-check reported
//   FUZZ_RUNS=<n>            generated requests (default 10,000)
//   FUZZ_TIME_LIMIT_MS=<ms>  budget for the runs; running out before FUZZ_RUNS is a failure (default 200,000)

const RUNS = Number(process.env.FUZZ_RUNS ?? 10_000);
const SEED = process.env.FUZZ_SEED === undefined ? (Date.now() ^ (Math.random() * 2 ** 31)) | 0 : Number(process.env.FUZZ_SEED);
const REPLAY_PATH = process.env.FUZZ_PATH;
const TIME_LIMIT_MS = Number(process.env.FUZZ_TIME_LIMIT_MS ?? 200_000);
/** No answer in this long is a hang. */
const HANG_MS = 10_000;
/** A stream of a running task stays open: read this long, then hang up. */
const SSE_READ_MS = 50;

/** Hostile requests (any answer within the contract) and, one in six, requests whose answer is fixed. */
const fuzzRequest = fc.oneof(
  { weight: 5, arbitrary: hostileRequest },
  { weight: 1, arbitrary: oracleRequest as fc.Arbitrary<FuzzRequest> },
);

type SuccessShape =
  | 'health'
  | 'openapi'
  | 'docs-ui'
  | 'created'
  | 'list'
  | 'task'
  | 'follow-up'
  | 'cancel'
  | 'fork'
  | 'approve'
  | 'sse'
  | 'events'
  | 'files'
  | 'download'
  | 'workspace-files'
  | 'deliveries'
  | 'redelivery';
const ROUTES: readonly (readonly [string, RegExp, SuccessShape])[] = [
  ['GET', /^\/healthz$/, 'health'],
  ['GET', /^\/api\/docs-json$/, 'openapi'],
  ['GET', /^\/api\/docs(\/swagger-ui\.css|\/swagger-ui-bundle\.js|\/swagger-ui-standalone-preset\.js)?$/, 'docs-ui'],
  ['POST', /^\/api\/v1\/tasks$/, 'created'],
  ['GET', /^\/api\/v1\/tasks$/, 'list'],
  ['GET', /^\/api\/v1\/tasks\/[^/]+$/, 'task'],
  ['POST', /^\/api\/v1\/tasks\/[^/]+\/messages$/, 'follow-up'],
  ['POST', /^\/api\/v1\/tasks\/[^/]+\/cancel$/, 'cancel'],
  ['POST', /^\/api\/v1\/tasks\/[^/]+\/fork$/, 'fork'],
  ['POST', /^\/api\/v1\/tasks\/[^/]+\/tools\/[^/]+\/approve$/, 'approve'],
  ['GET', /^\/api\/v1\/tasks\/[^/]+\/stream$/, 'sse'],
  ['GET', /^\/api\/v1\/tasks\/[^/]+\/events$/, 'events'],
  ['GET', /^\/api\/v1\/tasks\/[^/]+\/artifacts$/, 'files'],
  ['GET', /^\/api\/v1\/tasks\/[^/]+\/artifacts\/download$/, 'download'],
  ['GET', /^\/api\/v1\/tasks\/[^/]+\/files$/, 'workspace-files'],
  ['GET', /^\/api\/v1\/tasks\/[^/]+\/files\/download$/, 'download'],
  ['GET', /^\/api\/v1\/tasks\/[^/]+\/webhook-deliveries$/, 'deliveries'],
  ['POST', /^\/api\/v1\/tasks\/[^/]+\/webhook-deliveries\/[^/]+\/redeliver$/, 'redelivery'],
];
const TASK_STATUSES = ['pending', 'running', 'awaiting_approval', 'completed', 'failed', 'cancelled'];
const successStatus = (shape: SuccessShape) =>
  shape === 'created' || shape === 'follow-up' || shape === 'fork' ? 201 : shape === 'redelivery' ? 202 : 200;

/** The route a request line names, by the pathname and method the server routes on. */
function routeOf(wire: WireRequest): { pathname: string; shape?: SuccessShape } {
  const pathname = wire.pathname.replace(/^https?:\/\/[^/]*/i, '').split('#')[0];
  const method = wire.method === 'HEAD' ? 'GET' : wire.method;
  return { pathname, shape: ROUTES.find(([m, pattern]) => m === method && pattern.test(pathname))?.[2] };
}

/** Why this response breaks the contract, or undefined. `first`: the response to the request we built (not a pipelined extra). */
function contractBreach(wire: WireRequest, res: RawResponse, first: boolean): string | undefined {
  if (!Number.isInteger(res.status)) return 'the answer is not an HTTP response';
  if (res.status >= 500) return `${res.status}: a server error`;
  if (first && wire.expected) {
    const shape = routeOf(wire).shape;
    const breach = expectationBreach(wire.expected, res, shape && successStatus(shape));
    if (breach) return breach;
  }
  const isHead = wire.heads[first ? 0 : 1] ?? false;
  if (res.status >= 400) {
    if (!(res.headers['content-type'] ?? '').startsWith('application/json'))
      return `error ${res.status} with Content-Type "${res.headers['content-type']}", not the JSON envelope`;
    if (isHead) return undefined; // a HEAD answer has no body to hold the envelope
    const body = parseJson(res.body);
    if (body === undefined) return `error ${res.status} with a body that is not JSON`;
    if (
      !isPlainObject(body) ||
      !sameKeys(body, ['success', 'error']) ||
      body.success !== false ||
      !isPlainObject(body.error) ||
      !sameKeys(body.error, ['code', 'message'])
    ) {
      return `error ${res.status} not in the envelope {"success":false,"error":{"code","message"}}`;
    }
    const { code, message } = body.error as { code: unknown; message: unknown };
    if (typeof code !== 'string' || !(code in STATUSES_OF_CODE))
      return `error ${res.status} with code ${JSON.stringify(code)}, not a contract code`;
    if (!STATUSES_OF_CODE[code].includes(res.status)) return `error code ${code} sent with status ${res.status}`;
    if (typeof message !== 'string' || message === '') return `error ${res.status} without a message`;
    if (/\n\s+at /.test(message)) return `error ${res.status} with a stack trace in its message`;
    return undefined;
  }
  if (!first) return res.status === 200 || res.status === 201 ? undefined : `unexpected status ${res.status}`;

  const { pathname, shape } = routeOf(wire);
  if (!shape) return `${res.status} for ${wire.method} ${pathname.slice(0, 100)}, a route the API does not have`;
  const guarded = pathname.startsWith('/api/v1/');
  if (guarded && wire.grants === 'none') return `${res.status} without a valid API key`;
  if (guarded && wire.owner && (wire.grants === 'A' || wire.grants === 'B') && wire.owner !== wire.grants)
    return `${res.status} for another tenant's task`;
  const expected = successStatus(shape);
  if (res.status !== expected) return `status ${res.status} for ${shape}, expected ${expected}`;
  if (isHead) return undefined;

  if (shape === 'sse') {
    if (!res.headers['content-type']?.startsWith('text/event-stream')) return 'stream without Content-Type text/event-stream';
    const text = res.body.toString('utf8');
    return text === '' || /^(event|data|id|retry|):/.test(text)
      ? undefined
      : `stream that does not start with an SSE field: ${JSON.stringify(text.slice(0, 80))}`;
  }
  if (shape === 'docs-ui')
    return /^(text\/html|text\/css|application\/javascript)/.test(res.headers['content-type'] ?? '')
      ? undefined
      : 'docs page with an odd Content-Type';
  if (shape === 'download') {
    if (!(res.headers['content-disposition'] ?? '').startsWith('attachment')) return 'download without Content-Disposition: attachment';
    return Number(res.headers['content-length']) === res.body.length ? undefined : 'download whose Content-Length is not its size';
  }
  const body = parseJson(res.body);
  if (!isPlainObject(body)) return `${shape} answer that is not a JSON object`;
  if (shape === 'health') return sameKeys(body, ['status']) && body.status === 'ok' ? undefined : 'healthz answer is not {"status":"ok"}';
  if (shape === 'openapi')
    return typeof body.openapi === 'string' && isPlainObject(body.paths) ? undefined : 'OpenAPI document without openapi and paths';
  if (shape === 'files') return sameKeys(body, ['files']) && Array.isArray(body.files) ? undefined : 'artifact list is not {files: [...]}';
  if (!sameKeys(body, ['success', 'data']) || body.success !== true || !isPlainObject(body.data))
    return `${shape} answer not in the envelope {"success":true,"data":{...}}`;
  const data = body.data;
  const ok =
    shape === 'created'
      ? sameKeys(data, ['id', 'status']) && /^task_/.test(String(data.id)) && data.status === 'pending'
      : shape === 'list'
        ? sameKeys(data, ['tasks', 'nextCursor']) &&
          Array.isArray(data.tasks) &&
          (data.nextCursor === null || typeof data.nextCursor === 'string')
        : shape === 'task'
          ? typeof data.id === 'string' && TASK_STATUSES.includes(String(data.status)) && Array.isArray(data.pendingApprovals)
          : shape === 'follow-up'
            ? sameKeys(data, ['id', 'messageId', 'status']) && TASK_STATUSES.includes(String(data.status))
            : shape === 'cancel'
              ? sameKeys(data, ['id', 'status']) && TASK_STATUSES.includes(String(data.status))
              : shape === 'fork'
                ? sameKeys(data, ['id', 'status', 'forkedFrom']) &&
                  /^task_/.test(String(data.id)) &&
                  TASK_STATUSES.includes(String(data.status)) &&
                  isPlainObject(data.forkedFrom)
                : shape === 'workspace-files'
                  ? sameKeys(data, ['at', 'files', 'nextCursor']) &&
                    Number.isInteger(data.at) &&
                    Array.isArray(data.files) &&
                    (data.nextCursor === null || typeof data.nextCursor === 'string')
                  : shape === 'events'
                    ? (sameKeys(data, ['events']) || sameKeys(data, ['events', 'nextAfter'])) &&
                      Array.isArray(data.events) &&
                      data.events.every((e) => isPlainObject(e) && sameKeys(e, ['id', 'type', 'data', 'at']))
                    : shape === 'deliveries'
                      ? sameKeys(data, ['deliveries']) && Array.isArray(data.deliveries)
                      : shape === 'redelivery'
                        ? typeof data.id === 'string' && data.status === 'pending' && Array.isArray(data.attempts)
                        : /* approve */ sameKeys(data, ['callId', 'outcome', 'approved']) &&
                          ['proceed_once', 'proceed_always', 'cancel'].includes(String(data.outcome)) &&
                          data.approved === (data.outcome !== 'cancel');
  return ok ? undefined : `${shape} data of an unexpected shape: ${JSON.stringify(data).slice(0, 200)}`;
}

/** A problem with the exchange as a whole: no answer at all, or one cut off. */
function exchangeBreach(ex: RawExchange): string | undefined {
  if (ex.responses.length > 0) return undefined;
  if (ex.timedOut) return `no answer within ${HANG_MS} ms: the connection hangs`;
  return ex.leftover > 0
    ? `an answer cut off after ${ex.leftover} bytes`
    : `the connection was closed without an answer (${ex.socketError ?? 'closed'})`;
}

const parseJson = (bytes: Buffer): unknown => {
  try {
    return JSON.parse(bytes.toString('utf8'));
  } catch {
    return undefined;
  }
};
const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const sameKeys = (v: Record<string, unknown>, keys: readonly string[]) => Object.keys(v).sort().join() === [...keys].sort().join();

/**
 * The scripted model: a task whose latest message says FUZZ:ask / FUZZ:write / FUZZ:shell gets a
 * tool call (waiting for a decision when the task was created with autoExecute false), anything
 * else a short answer; after a tool result, a short answer ends the turn.
 */
function modelReply(body: ChatCompletionsBody): ScriptedReply {
  const messages = body.messages ?? [];
  const last = messages[messages.length - 1];
  if (last?.role !== 'user') return { text: 'done' };
  const text = String(last.content);
  if (text.includes('FUZZ:ask')) return { toolCalls: [{ name: 'list_files', arguments: {} }] };
  if (text.includes('FUZZ:write'))
    return { toolCalls: [{ name: 'write_file', arguments: { path: 'downloads/report.md', content: '# fuzz\n' } }] };
  if (text.includes('FUZZ:shell')) return { toolCalls: [{ name: 'shell', arguments: { command: 'echo fuzz > downloads/shell.txt' } }] };
  return { text: 'ok' };
}

describe('API fuzz: generated requests to every endpoint are answered within the contract', () => {
  let h: Harness;
  let host: string;
  let port: number;
  /** Every task's webhooks go here (WEBHOOK_URL), answered at once: real deliveries to redeliver. */
  let receiver: WebhookReceiver;
  let ids: RealIds;

  const sent: Record<string, number> = Object.fromEntries(ENDPOINTS.map((e) => [e, 0]));
  const statuses: Record<string, number> = {};
  const statusesOf: Record<string, Record<string, number>> = Object.fromEntries(ENDPOINTS.map((e) => [e, {}]));
  /** Requests with a fixed answer that got it: `success`, or the error code. */
  const fixedOf: Record<string, Record<string, number>> = Object.fromEntries(ENDPOINTS.map((e) => [e, {}]));
  let serverErrors = 0;
  const count = (tally: Record<string, number>, key: string | number) => void (tally[key] = (tally[key] ?? 0) + 1);
  const tallyText = (tally: Record<string, number>) =>
    Object.entries(tally)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([s, n]) => `${s}×${n}`)
      .join(' ');

  /** Sends one request and checks what came back; throws (a fast-check failure) on any breach. */
  const exchangeAndCheck = async (endpoint: Endpoint, wire: WireRequest) => {
    const ex = await rawExchange(host, port, wire.chunks, {
      timeoutMs: HANG_MS,
      expectedResponses: 1,
      lingerMs: wire.responses > 1 ? 150 : 0,
      sseReadMs: SSE_READ_MS,
      headRequests: wire.heads,
    });
    sent[endpoint] += 1;
    for (const res of ex.responses) {
      count(statuses, res.status);
      count(statusesOf[endpoint], res.status);
      if (res.status >= 500) serverErrors += 1;
    }
    if (ex.responses.length === 0) count(statuses, 'no answer');
    ids.harvest(wire, ex.responses[0]);
    const breach = exchangeBreach(ex) ?? ex.responses.map((res, i) => contractBreach(wire, res, i === 0)).find((b) => b !== undefined);
    if (!breach && wire.expected) count(fixedOf[endpoint], 'success' in wire.expected ? 'success' : wire.expected.code);
    if (breach) {
      const answers = ex.responses.map(
        (r) => `${r.status} ${JSON.stringify(r.headers['content-type'])} ${JSON.stringify(r.body.toString('utf8').slice(0, 300))}`,
      );
      throw new Error(
        `${breach}\n  request: ${JSON.stringify(wire.line)} (auth: ${wire.grants}, task owner: ${wire.owner ?? '-'})\n  answers: ${answers.join(' | ') || '-'}`,
      );
    }
  };

  beforeAll(async () => {
    receiver = await startWebhookReceiver((_request, res) => res.writeHead(204).end());
    // A 1 MiB body limit and 5 files, so that 413s are cheap to reach.
    h = await startHarness({
      UPLOAD_MAX_BYTES: '1048576',
      UPLOAD_MAX_FILES: '5',
      WEBHOOK_SECRET: `whsec_${randomBytes(32).toString('base64')}`,
      WEBHOOK_ALLOW_HOSTS: `127.0.0.1:${receiver.port}`,
      WEBHOOK_URL: `${receiver.origin}/hooks`,
    });
    ids = new RealIds({ A: API_KEY, B: OTHER_API_KEY }, (path) => h.api(path));
    const { own, other, pendingCalls } = ids;
    const url = new URL(h.url);
    host = url.hostname;
    port = Number(url.port);
    // Re-queued by itself: every model request gets the marker-driven answer.
    const reply = (body: ChatCompletionsBody): ScriptedReply => {
      h.model.script(reply);
      return modelReply(body);
    };
    h.model.script(reply);

    // A few real tasks to start from: waiting calls of both tenants, an artifact, a finished task.
    const create = async (key: string, message: string, autoExecute: boolean) =>
      (await h.api('/api/v1/tasks', { method: 'POST', key, json: { message, autoExecute } })).body.data.id as string;
    for (const [message, autoExecute] of [
      ['FUZZ:ask seed 1', false],
      ['FUZZ:write seed', true],
      ['FUZZ:plain seed', true],
      ['FUZZ:ask seed 2', false],
      ['FUZZ:write seed ask', false],
    ] as const)
      own.push(await create(API_KEY, message, autoExecute));
    other.push(await create(OTHER_API_KEY, 'FUZZ:ask other', false), await create(OTHER_API_KEY, 'FUZZ:write other', true));
    await waitFor(
      async () => {
        const { body } = await h.api('/api/v1/tasks?limit=100');
        ids.addCalls(body.data.tasks);
        return pendingCalls.length >= 3 || undefined;
      },
      15_000,
      'the seed tasks to ask for approval',
    );
    const files = await waitFor(
      async () => (await h.api(`/api/v1/tasks/${own[1]}/artifacts`)).body.files?.[0],
      15_000,
      'the seed artifact',
    );
    ids.addArtifacts(own[1], [files]);
    // The seed tasks' webhook messages (task.completed, task.awaiting_approval): real deliveries to redeliver.
    await waitFor(
      async () => {
        for (const task of own) ids.addDeliveries(task, (await h.api(`/api/v1/tasks/${task}/webhook-deliveries`)).body.data.deliveries);
        return ids.deliveries.length >= 2 || undefined;
      },
      15_000,
      'the seed tasks’ webhook deliveries',
    );
  }, 60_000);
  afterAll(async () => {
    await h?.close();
    await receiver?.close();
  });

  it(
    `answers ${RUNS} generated requests without a 5xx, a hang or a breach of the error envelope, and is still serving afterwards`,
    async () => {
      process.stdout.write(
        `API fuzz: seed ${SEED}${REPLAY_PATH ? `, path ${REPLAY_PATH}` : ''}, ${RUNS} runs (replay with FUZZ_SEED=${SEED})\n`,
      );
      const started = Date.now();
      const total = () => Object.values(sent).reduce((a, b) => a + b, 0);
      // Printed whatever the outcome: what was sent, what came back.
      const summary = () =>
        process.stdout.write(
          `API fuzz summary: ${total()} requests in ${((Date.now() - started) / 1000).toFixed(1)} s (seed ${SEED}); statuses: ${tallyText(statuses)}; 5xx = ${serverErrors}; ` +
            `pools: ${ids.own.length} own tasks, ${ids.other.length} other-tenant tasks, ${ids.pendingCalls.length} tool calls, ` +
            `${ids.artifacts.length} artifacts, ${ids.deliveries.length} webhook deliveries; per endpoint (answers as fixed):\n` +
            ENDPOINTS.map((e) => `  ${e}: ${sent[e]} (${tallyText(statusesOf[e])}) (${tallyText(fixedOf[e])})\n`).join(''),
        );
      let runs = 0;
      await fc
        .assert(
          fc.asyncProperty(fuzzRequest, async (request) => {
            await exchangeAndCheck(request.endpoint, toWire(request, await ids.poolsFor(request)));
            // Now and then a plain list: picks up the calls now waiting (and is fuzzed traffic too).
            if (++runs % 100 === 0)
              await exchangeAndCheck(
                'GET /tasks',
                toWire(
                  {
                    endpoint: 'GET /tasks',
                    method: 'GET',
                    path: ['api', 'v1', 'tasks'],
                    query: [['limit', '100']],
                    auth: { values: ['Bearer {A}'], grants: 'A' },
                    headers: [],
                    framing: { kind: 'length' },
                    version: 'HTTP/1.1',
                    close: true,
                  },
                  ids,
                ),
              );
          }),
          {
            seed: SEED,
            numRuns: RUNS,
            ...(REPLAY_PATH ? { path: REPLAY_PATH } : {}),
            includeErrorInReport: true,
            plugins: [fc.interruptAfterTimeLimit(TIME_LIMIT_MS, { failOnInterrupt: true })],
          },
        )
        .finally(summary);

      // Still serving: health, and a valid create that can be read back.
      const health = await h.api('/healthz', { key: null });
      expect({ status: health.status, body: health.body }).toEqual({ status: 200, body: { status: 'ok' } });
      const created = await h.api('/api/v1/tasks', { method: 'POST', json: { message: 'FUZZ:plain after the fuzz' } });
      expect(created.status).toBe(201);
      expect((await h.api(`/api/v1/tasks/${created.body.data.id}`)).status).toBe(200);

      expect(serverErrors).toBe(0);
      if (!REPLAY_PATH) expect(total()).toBeGreaterThanOrEqual(RUNS);
      for (const endpoint of ENDPOINTS)
        if (!REPLAY_PATH && RUNS >= 1_000) expect({ endpoint, reached: sent[endpoint] > RUNS / 200 }).toEqual({ endpoint, reached: true });
      // Every endpoint's success path was taken by a valid request (the redelivery's 202 among them).
      for (const endpoint of ENDPOINTS.filter((e) => e !== 'unknown route or method' && e !== 'malformed HTTP'))
        if (!REPLAY_PATH && RUNS >= 1_000)
          expect({ endpoint, succeeded: (fixedOf[endpoint].success ?? 0) > 0 }).toEqual({ endpoint, succeeded: true });
    },
    TIME_LIMIT_MS + 60_000,
  );
});
