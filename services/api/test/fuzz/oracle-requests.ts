import fc from 'fast-check';
import type {
  AuthSpec,
  BodySpec,
  Endpoint,
  Framing,
  HttpRequestSpec,
  JsonSpec,
  MultipartSpec,
  QueryValue,
  RefusalCode,
  Segment,
  Text,
} from './request-arbitraries';
import { OUTCOMES, VALID_AUTH, goodMessage, obj, repeat, utf8Bytes, validCreateJson } from './request-arbitraries';

// Requests whose answer docs/api.md fixes, for the API fuzz. A valid request must get its route's
// success status: refused with any 4xx is a failure. A valid request given exactly one defect must
// get that defect's error code. The hostile requests (request-arbitraries.ts) mix defects, so only
// the shape of their answers can be checked; these are the ones that catch a valid request refused.

type Query = readonly (readonly [Text, QueryValue])[];
interface Content {
  readonly body: BodySpec;
  readonly contentType: Text;
}

/** Headers clients and proxies add that change nothing the request asks. */
const harmlessHeaders: fc.Arbitrary<readonly (readonly [Text, Text])[]> = fc.array(
  fc.oneof(
    fc.constantFrom<readonly [Text, Text]>(
      ['accept', 'application/json'],
      ['accept', '*/*'],
      ['user-agent', 'ats-fuzz/1'],
      ['accept-language', 'en'],
    ),
    fc.stringMatching(/^[A-Za-z0-9._:-]{1,128}$/).map((id): readonly [Text, Text] => ['x-request-id', id]),
  ),
  { maxLength: 2 },
);

/** Framing and HTTP version: chunked only in HTTP/1.1, where it exists. */
const transport = (hasBody: boolean) =>
  fc
    .record({
      framing: hasBody
        ? fc.oneof(
            { weight: 3, arbitrary: fc.constant<Framing>({ kind: 'length' }) },
            {
              weight: 1,
              arbitrary: fc.record({
                kind: fc.constant('chunked' as const),
                // Not the one-byte chunks of the hostile requests: a 1 MiB body in those takes seconds.
                sizes: fc.array(fc.integer({ min: 256, max: 16_384 }), { minLength: 1, maxLength: 3 }),
                extension: fc.boolean(),
                trailer: fc.boolean(),
              }),
            },
          )
        : fc.constant<Framing>({ kind: 'length' }),
      http10: fc.boolean(),
      close: fc.boolean(),
    })
    .map(({ framing, http10, close }) => ({
      framing,
      version: http10 && framing.kind === 'length' ? ('HTTP/1.0' as const) : ('HTTP/1.1' as const),
      close,
    }));

const json = (body: fc.Arbitrary<JsonSpec>): fc.Arbitrary<Content> =>
  fc
    .tuple(body, fc.constantFrom('application/json', 'application/json; charset=utf-8'))
    .map(([spec, contentType]) => ({ body: { json: spec, encoding: 'utf8' as const }, contentType }));

/** A create as a form: a message, maybe autoExecute, up to three small files of distinct plain names. */
const validForm: fc.Arbitrary<Content> = fc
  .record({
    boundary: fc.stringMatching(/^[A-Za-z0-9_-]{16,40}$/),
    message: goodMessage.map(utf8Bytes),
    autoExecute: fc.option(fc.constantFrom('true', 'false'), { nil: undefined }),
    files: fc.uniqueArray(
      fc.record({
        filename: fc.stringMatching(/^[a-z]{1,8}\.(txt|csv|md|bin)$/),
        value: fc.string({ unit: 'grapheme-ascii', maxLength: 200 }),
      }),
      { maxLength: 3, selector: (f) => f.filename },
    ),
  })
  .map(({ boundary, message, autoExecute, files }): Content => {
    const multipart: MultipartSpec = {
      boundary,
      contentType: `multipart/form-data; boundary=${boundary}`,
      parts: [
        { name: 'message', value: message, disposition: 'normal' },
        ...(autoExecute === undefined ? [] : [{ name: 'autoExecute', value: autoExecute, disposition: 'normal' as const }]),
        ...files.map((f) => ({
          name: 'files',
          filename: f.filename,
          contentType: 'text/plain',
          value: f.value,
          disposition: 'normal' as const,
        })),
      ],
      preamble: '',
      newline: '\r\n',
      ending: 'close',
      cutPerMille: 1000,
    };
    return { body: { multipart }, contentType: multipart.contentType };
  });

/** The parts of a request to one endpoint; the rest (key, headers, framing) is generated alike for all. */
interface Ask {
  readonly endpoint: Endpoint;
  readonly method: string;
  readonly path: fc.Arbitrary<readonly Segment[]>;
  readonly query?: fc.Arbitrary<Query | undefined>;
  readonly content?: fc.Arbitrary<Content>;
  /** The route needs no key (health, the document): a request may carry one or not. */
  readonly open?: boolean;
}

const NO_KEY: AuthSpec = { values: [], grants: 'none' };

const validRequest = (ask: Ask): fc.Arbitrary<HttpRequestSpec> =>
  fc
    .record({
      path: ask.path,
      query: ask.query ?? fc.constant(undefined),
      content: ask.content ?? fc.constant(undefined),
      auth: ask.open ? fc.oneof(VALID_AUTH, fc.constant(NO_KEY)) : VALID_AUTH,
      headers: harmlessHeaders,
      transport: transport(ask.content !== undefined),
    })
    .map(({ path, query, content, auth, headers, transport }) => ({
      endpoint: ask.endpoint,
      method: ask.method,
      path,
      ...(query === undefined ? {} : { query }),
      auth,
      ...(content === undefined ? {} : { body: content.body, contentType: content.contentType }),
      headers,
      ...transport,
      expected: { success: true as const },
    }));

const tasks = (...rest: readonly Segment[]): readonly Segment[] => ['api', 'v1', 'tasks', ...rest];
const ownTask = (...rest: readonly Segment[]) => fc.nat().map((own) => tasks({ id: { own } }, ...rest));
const digits = (min: number, max: number) => fc.integer({ min, max }).map(String);
/** Each named parameter present or not. */
const someOf = (params: Record<string, fc.Arbitrary<string>>): fc.Arbitrary<Query | undefined> =>
  fc
    .record(params, { requiredKeys: [] })
    .map((picked) => (Object.keys(picked).length === 0 ? undefined : Object.entries(picked).map(([k, v]) => [k, v as string] as const)));

const VALID: Record<string, Ask> = {
  create: {
    endpoint: 'POST /tasks',
    method: 'POST',
    path: fc.constant(tasks()),
    // A form with files costs a workspace: fewer of those.
    content: fc.oneof({ weight: 4, arbitrary: json(validCreateJson) }, { weight: 1, arbitrary: validForm }),
  },
  list: {
    endpoint: 'GET /tasks',
    method: 'GET',
    path: fc.constant(tasks()),
    query: someOf({ limit: digits(1, 100), includeHidden: fc.constantFrom('true', 'false') }),
  },
  read: { endpoint: 'GET /tasks/{id}', method: 'GET', path: ownTask() },
  followUp: {
    endpoint: 'POST /tasks/{id}/messages',
    method: 'POST',
    path: ownTask('messages'),
    content: json(goodMessage.map((m) => obj([['message', m]]))),
  },
  cancel: { endpoint: 'POST /tasks/{id}/cancel', method: 'POST', path: ownTask('cancel') },
  // Event 1, the task's first message, is a fork point of every task.
  fork: {
    endpoint: 'POST /tasks/{id}/fork',
    method: 'POST',
    path: ownTask('fork'),
    content: json(
      fc
        .option(fc.boolean(), { nil: undefined })
        .map((a) => obj([['afterEventId', 1], ...(a === undefined ? [] : [['autoExecute', a] as const])])),
    ),
  },
  approve: {
    endpoint: 'POST /tasks/{id}/tools/{callId}/approve',
    method: 'POST',
    path: fc.nat().map((n) => tasks({ id: { pendingTask: n } }, 'tools', { call: { pendingCall: n } }, 'approve')),
    content: json(fc.constantFrom(...OUTCOMES).map((o) => obj([['outcome', o]]))),
  },
  stream: { endpoint: 'GET /tasks/{id}/stream', method: 'GET', path: ownTask('stream'), query: someOf({ after: digits(0, 30) }) },
  events: {
    endpoint: 'GET /tasks/{id}/events',
    method: 'GET',
    path: ownTask('events'),
    query: someOf({ after: digits(0, 30), limit: digits(1, 1000) }),
  },
  artifacts: { endpoint: 'GET /tasks/{id}/artifacts', method: 'GET', path: ownTask('artifacts') },
  download: {
    endpoint: 'GET /tasks/{id}/artifacts/download',
    method: 'GET',
    path: fc.nat().map((n) => tasks({ id: { artifactTask: n } }, 'artifacts', 'download')),
    query: fc.nat().map((n): Query => [['path', { artifactPath: n }]]),
  },
  // Event 1 exists in every task; the artifact tasks' files are in their workspace too.
  files: {
    endpoint: 'GET /tasks/{id}/files',
    method: 'GET',
    path: ownTask('files'),
    query: someOf({ at: fc.constant('1'), limit: digits(1, 1000) }),
  },
  fileDownload: {
    endpoint: 'GET /tasks/{id}/files/download',
    method: 'GET',
    path: fc.nat().map((n) => tasks({ id: { artifactTask: n } }, 'files', 'download')),
    query: fc.nat().map((n): Query => [['path', { artifactPath: n }]]),
  },
  deliveries: { endpoint: 'GET /tasks/{id}/webhook-deliveries', method: 'GET', path: ownTask('webhook-deliveries') },
  redeliver: {
    endpoint: 'POST /tasks/{id}/webhook-deliveries/{deliveryId}/redeliver',
    method: 'POST',
    path: fc.nat().map((n) => tasks({ id: { deliveryTask: n } }, 'webhook-deliveries', { call: { delivery: n } }, 'redeliver')),
  },
  health: { endpoint: 'GET /healthz', method: 'GET', path: fc.constant(['healthz']), open: true },
  document: { endpoint: 'GET /api/docs-json', method: 'GET', path: fc.constant(['api', 'docs-json']), open: true },
};
const valid = Object.fromEntries(Object.entries(VALID).map(([name, ask]) => [name, validRequest(ask)])) as Record<
  keyof typeof VALID,
  fc.Arbitrary<HttpRequestSpec>
>;

// ---------------------------------------------------------------------------------------------
// One defect each

/** `base` with one change, which makes the contract answer `code`. */
const defect = (
  base: fc.Arbitrary<HttpRequestSpec>,
  code: RefusalCode,
  because: string,
  change: (request: HttpRequestSpec) => Partial<HttpRequestSpec>,
): fc.Arbitrary<HttpRequestSpec> => base.map((request) => ({ ...request, ...change(request), expected: { code, because } }));

/** The real task (and call or delivery) the path names swapped for ones that do not exist. */
const unknownIds = (path: readonly Segment[], hex: string): readonly Segment[] =>
  path.map((s) =>
    typeof s === 'string' ? s : 'id' in s ? { id: { text: `task_${hex}` } } : { call: { text: `call_${hex.slice(0, 24)}` } },
  );
const withCall = (path: readonly Segment[], text: string): readonly Segment[] =>
  path.map((s) => (typeof s === 'object' && 'call' in s ? { call: { text } } : s));

/** Refusals every route under /api/v1 gives before it looks at anything else. */
const keyDefects = (base: fc.Arbitrary<HttpRequestSpec>) => [
  defect(base, 'AUTH_REQUIRED', 'no Authorization header', () => ({ auth: NO_KEY })),
  defect(base, 'AUTH_REQUIRED', 'an Authorization header that is not Bearer', () => ({
    auth: { values: ['Basic dGVzdDp0ZXN0'], grants: 'none' },
  })),
  defect(base, 'INVALID_API_KEY', 'a key the service does not know', () => ({ auth: { values: ['Bearer not-a-key'], grants: 'none' } })),
];
/** Refusals of every route that names a task. */
const taskDefects = (base: fc.Arbitrary<HttpRequestSpec>) => [
  ...keyDefects(base),
  defect(base, 'NOT_FOUND', "another tenant's key on the task", () => ({ auth: { values: ['Bearer {B}'], grants: 'B' } })),
  fc.tuple(base, fc.stringMatching(/^[0-9a-f]{32}$/)).map(([request, hex]): HttpRequestSpec => ({
    ...request,
    path: unknownIds(request.path, hex),
    expected: { code: 'NOT_FOUND', because: 'a task that does not exist' },
  })),
];
const bodyDefect = (base: fc.Arbitrary<HttpRequestSpec>, because: string, spec: JsonSpec) =>
  defect(base, 'VALIDATION_ERROR', because, () => ({ body: { json: spec, encoding: 'utf8' }, contentType: 'application/json' }));
const queryDefect = (base: fc.Arbitrary<HttpRequestSpec>, because: string, query: Query, code: RefusalCode = 'VALIDATION_ERROR') =>
  defect(base, code, because, () => ({ query }));
/** A JSON body over the suite's 1 MiB UPLOAD_MAX_BYTES. */
const OVERSIZED: JsonSpec = obj([['message', repeat('a', 1_100_000)]]);
const oversized = (base: fc.Arbitrary<HttpRequestSpec>) =>
  defect(base, 'PAYLOAD_TOO_LARGE', 'a body over UPLOAD_MAX_BYTES', () => ({
    body: { json: OVERSIZED, encoding: 'utf8' },
    contentType: 'application/json',
  }));

const REFUSED: readonly fc.Arbitrary<HttpRequestSpec>[] = [
  ...keyDefects(valid.create),
  bodyDefect(valid.create, 'a create without a message', obj([['autoExecute', true]])),
  bodyDefect(valid.create, 'an empty message', obj([['message', '']])),
  bodyDefect(valid.create, 'a message that is not a string', obj([['message', 42]])),
  bodyDefect(valid.create, 'a message over 100,000 characters', obj([['message', repeat('a', 100_001)]])),
  bodyDefect(
    valid.create,
    'an unknown field',
    obj([
      ['message', 'FUZZ:plain unknown field'],
      ['bogus', true],
    ]),
  ),
  bodyDefect(
    valid.create,
    'autoExecute that is not a boolean',
    obj([
      ['message', 'FUZZ:plain x'],
      ['autoExecute', 'yes'],
    ]),
  ),
  bodyDefect(valid.create, 'JSON cut short', { $raw: '{"message": ' }),
  defect(valid.create, 'VALIDATION_ERROR', 'a create sent as text/plain', () => ({
    body: { json: obj([['message', 'FUZZ:plain as text']]), encoding: 'utf8' },
    contentType: 'text/plain',
  })),
  oversized(valid.create),

  ...keyDefects(valid.list),
  queryDefect(valid.list, 'limit 0', [['limit', '0']]),
  queryDefect(valid.list, 'limit over 100', [['limit', '101']]),
  queryDefect(valid.list, 'a limit that is not a number', [['limit', 'abc']]),
  queryDefect(valid.list, 'includeHidden neither true nor false', [['includeHidden', 'maybe']]),

  ...taskDefects(valid.read),

  ...taskDefects(valid.followUp),
  bodyDefect(valid.followUp, 'a follow-up without a message', obj([])),
  bodyDefect(valid.followUp, 'an empty message', obj([['message', '  ']])),
  bodyDefect(valid.followUp, 'JSON cut short', { $raw: '{"message": "FUZZ:plain' }),
  oversized(valid.followUp),

  ...taskDefects(valid.cancel),

  ...taskDefects(valid.fork),
  bodyDefect(valid.fork, 'a fork without afterEventId', obj([])),
  bodyDefect(valid.fork, 'an afterEventId that is not an integer', obj([['afterEventId', '1']])),
  bodyDefect(
    valid.fork,
    'a message with an event that is not a done',
    obj([
      ['afterEventId', 1],
      ['message', 'FUZZ:plain again'],
    ]),
  ),
  defect(valid.fork, 'NOT_FOUND', 'an event the task does not have', () => ({
    body: { json: obj([['afterEventId', 100_000]]), encoding: 'utf8' },
    contentType: 'application/json',
  })),
  oversized(valid.fork),

  ...taskDefects(valid.approve),
  defect(valid.approve, 'NOT_FOUND', 'a tool call the task does not have', (r) => ({ path: withCall(r.path, 'call_unknown') })),
  bodyDefect(valid.approve, 'an outcome outside the three', obj([['outcome', 'approve']])),
  bodyDefect(valid.approve, 'no outcome', obj([])),
  oversized(valid.approve),

  ...taskDefects(valid.stream),
  queryDefect(valid.stream, 'a negative after', [['after', '-1']]),
  queryDefect(valid.stream, 'an after that is not a number', [['after', 'x']]),

  ...taskDefects(valid.events),
  queryDefect(valid.events, 'a negative after', [['after', '-1']]),
  queryDefect(valid.events, 'limit 0', [['limit', '0']]),
  queryDefect(valid.events, 'limit over 1000', [['limit', '1001']]),

  ...taskDefects(valid.artifacts),

  ...taskDefects(valid.download),
  queryDefect(valid.download, 'no path', []),
  queryDefect(valid.download, 'a path out of the workspace', [['path', '..%2Fetc%2Fpasswd']]),
  queryDefect(valid.download, 'an absolute path', [['path', '%2Fetc%2Fpasswd']]),
  queryDefect(valid.download, 'a path that is no artifact', [['path', 'downloads%2Fnone.md']], 'NOT_FOUND'),

  ...taskDefects(valid.files),
  queryDefect(valid.files, 'at 0', [['at', '0']]),
  queryDefect(valid.files, 'an at that is not an event id', [['at', 'x']]),
  queryDefect(valid.files, 'limit over 1000', [['limit', '1001']]),
  queryDefect(valid.files, 'a cursor no page gave', [['cursor', 'not-a-cursor!']]),
  queryDefect(valid.files, 'an event the task does not have', [['at', '100000']], 'NOT_FOUND'),

  ...taskDefects(valid.fileDownload),
  queryDefect(valid.fileDownload, 'no path', []),
  queryDefect(valid.fileDownload, 'a path that is no file', [['path', 'downloads%2Fnone.md']], 'NOT_FOUND'),
  queryDefect(valid.fileDownload, 'a path out of the workspace', [['path', '..%2Fetc%2Fpasswd']], 'NOT_FOUND'),

  ...taskDefects(valid.deliveries),

  ...taskDefects(valid.redeliver),
  defect(valid.redeliver, 'NOT_FOUND', 'a delivery the task does not have', (r) => ({
    path: withCall(r.path, 'wh_00000000000000000000000000000000_1'),
  })),

  defect(valid.read, 'NOT_FOUND', 'a route the API does not have', (r) => ({
    endpoint: 'unknown route or method',
    path: [...r.path, 'nope'],
  })),
];

/**
 * Valid requests to every endpoint, each of which must succeed, and refused ones, each of which
 * must get its defect's code. Weighted towards the endpoints whose success depends on real state.
 */
export const oracleRequest: fc.Arbitrary<HttpRequestSpec> = fc.oneof(
  { weight: 1, arbitrary: valid.create },
  { weight: 1, arbitrary: valid.list },
  { weight: 1, arbitrary: valid.read },
  { weight: 1, arbitrary: valid.followUp },
  { weight: 1, arbitrary: valid.cancel },
  { weight: 1, arbitrary: valid.fork },
  { weight: 2, arbitrary: valid.approve },
  { weight: 1, arbitrary: valid.stream },
  { weight: 1, arbitrary: valid.events },
  { weight: 1, arbitrary: valid.artifacts },
  { weight: 1, arbitrary: valid.download },
  { weight: 1, arbitrary: valid.files },
  { weight: 1, arbitrary: valid.fileDownload },
  { weight: 1, arbitrary: valid.deliveries },
  { weight: 2, arbitrary: valid.redeliver },
  { weight: 1, arbitrary: valid.health },
  { weight: 1, arbitrary: valid.document },
  { weight: 16, arbitrary: fc.oneof(...REFUSED) },
);
