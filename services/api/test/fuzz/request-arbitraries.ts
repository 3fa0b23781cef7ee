import fc from 'fast-check';

// Generators of HTTP requests for the API fuzz suite (api.fuzz.e2e-spec.ts). A generated request
// is plain data, so fast-check can print and shrink it: big values are descriptors ({$repeat})
// expanded only when sent, and real task ids, call ids and artifact paths are references into
// pools the suite fills as it goes (`{own: 3}`: the 3rd task of tenant A, modulo the pool size).

// ---------------------------------------------------------------------------------------------
// Building blocks

/** Text as sent, one JS char per byte for paths and headers (latin1): raw bytes stay raw. */
export type Text = string | { readonly $repeat: string; readonly times: number } | readonly Text[];

export const expand = (text: Text): string =>
  typeof text === 'string' ? text : Array.isArray(text) ? text.map(expand).join('') : repeatOf(text as { $repeat: string; times: number });
const repeatOf = (r: { $repeat: string; times: number }) => r.$repeat.repeat(r.times);
export const repeat = ($repeat: string, times: number): { readonly $repeat: string; readonly times: number } => ({ $repeat, times });

/** UTF-8 bytes of a JS string, as latin1 chars; a lone surrogate becomes its 3-byte WTF-8 form (not valid UTF-8). */
export function utf8Bytes(text: string): string {
  let out = '';
  for (const ch of text) {
    const cp = ch.codePointAt(0)!;
    if (cp >= 0xd800 && cp <= 0xdfff) out += String.fromCharCode(0xe0 | (cp >> 12), 0x80 | ((cp >> 6) & 0x3f), 0x80 | (cp & 0x3f));
    else out += Buffer.from(ch, 'utf8').toString('latin1');
  }
  return out;
}

/** Percent-encodes every byte outside unreserved characters, lone surrogates included. */
export function percentEncode(text: string): string {
  return utf8Bytes(text).replace(/[^A-Za-z0-9\-._~]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`);
}

/** Strings a hostile client sends: NUL, lone surrogates, controls, bidi, markup, injections, any code point. */
const hostileText: fc.Arbitrary<string> = fc.oneof(
  fc.string({ maxLength: 30 }),
  fc.string({ unit: 'binary', maxLength: 30 }),
  fc.string({ unit: 'grapheme', maxLength: 12 }),
  fc.constantFrom(
    '',
    ' ',
    '\u0000',
    'a\u0000b',
    '\ud800',
    'x\udc00',
    '\udbff\udfff',
    '\ud83d\ude80',
    '\u202e',
    '\ufeff',
    '\r\n',
    '\t',
    '\u0007',
    '%00',
    '../../etc/passwd',
    '{{secrets.TOKEN}}',
    '$(id)',
    '`id`',
    '<script>alert(1)</script>',
    "'; DROP TABLE tasks; --",
    '__proto__',
    'constructor',
    'null',
    'true',
    '1e309',
    '-0',
    '\\',
    '"',
    '\u00e9',
    '\u4e2d\u6587',
    '\ud834\udd1e',
  ),
);

// ---------------------------------------------------------------------------------------------
// JSON bodies, as data: `{$object: [[k, v]…]}` keeps duplicate and __proto__ keys, `{$raw}` is
// sent verbatim (invalid JSON, exact escapes), `{$bytes}` inserts raw bytes (invalid UTF-8).

export type JsonSpec =
  | null
  | boolean
  | number
  | string
  | { readonly $repeat: string; readonly times: number }
  | { readonly $object: readonly (readonly [string, JsonSpec])[] }
  | { readonly $array: readonly JsonSpec[] }
  | { readonly $deep: number; readonly open: '[' | '{"a":' }
  | { readonly $raw: string }
  | { readonly $bytes: readonly number[] };

export const obj = (entries: readonly (readonly [string, JsonSpec])[]): JsonSpec => ({ $object: entries });

/** The body bytes of a JsonSpec: text pieces as UTF-8, `$bytes` as they are. */
export function serializeJson(spec: JsonSpec): Buffer {
  const pieces: (string | Buffer)[] = [];
  const walk = (v: JsonSpec): void => {
    if (v === null || typeof v !== 'object') return void pieces.push(JSON.stringify(v) ?? 'null');
    if ('$repeat' in v) return void pieces.push(JSON.stringify(repeatOf(v)));
    if ('$raw' in v) return void pieces.push(v.$raw);
    if ('$bytes' in v) return void pieces.push('"', Buffer.from(v.$bytes), '"');
    if ('$deep' in v) return void pieces.push(v.open.repeat(v.$deep), '1', (v.open === '[' ? ']' : '}').repeat(v.$deep));
    if ('$array' in v) {
      pieces.push('[');
      v.$array.forEach((item, i) => (i > 0 && pieces.push(','), walk(item)));
      return void pieces.push(']');
    }
    pieces.push('{');
    v.$object.forEach(([key, item], i) => {
      if (i > 0) pieces.push(',');
      pieces.push(JSON.stringify(key), ':');
      walk(item);
    });
    pieces.push('}');
  };
  walk(spec);
  return Buffer.concat(pieces.map((p) => (typeof p === 'string' ? Buffer.from(p, 'utf8') : p)));
}

const jsonLeaf: fc.Arbitrary<JsonSpec> = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  fc.oneof(fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.constantFrom(0, -1, 2 ** 53, 1e308)),
  hostileText,
  fc.constantFrom<JsonSpec>(
    { $raw: '1e999' },
    { $raw: '-0' },
    { $raw: '"\\ud800"' },
    { $raw: '"\\u0000"' },
    { $raw: '123456789012345678901234567890' },
  ),
);

const anyJson: fc.Arbitrary<JsonSpec> = fc.letrec<{ v: JsonSpec }>((tie) => ({
  v: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    jsonLeaf,
    fc.array(tie('v'), { maxLength: 4 }).map(($array): JsonSpec => ({ $array })),
    fc
      .array(fc.tuple(fc.oneof(hostileText, fc.constantFrom('message', 'outcome', '__proto__', 'constructor')), tie('v')), { maxLength: 4 })
      .map(obj),
  ),
})).v;

/** Invalid UTF-8 inside a JSON string: stray continuation, overlong, surrogate half, cut sequence, 0xFF. */
const invalidUtf8: fc.Arbitrary<JsonSpec> = fc
  .constantFrom([0x80], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0xe2, 0x82], [0xff, 0xfe], [0xf4, 0x90, 0x80, 0x80], [0x41, 0x00, 0x42])
  .map(($bytes): JsonSpec => ({ $bytes }));

/** Values of the wrong type for a field that wants `wanted`. */
const wrongType = (wanted: 'string' | 'boolean' | 'object'): fc.Arbitrary<JsonSpec> =>
  fc.oneof(
    ...(wanted === 'string' ? [] : [hostileText]),
    ...(wanted === 'boolean' ? [] : [fc.boolean()]),
    fc.constant(null),
    fc.integer(),
    fc.constant<JsonSpec>({ $array: [] }),
    ...(wanted === 'object' ? [] : [fc.constant<JsonSpec>(obj([]))]),
    fc.constantFrom<JsonSpec>('true', 'false', '0', '1', ''),
    anyJson,
  );

/** A message field: mostly a usable instruction (with a model-script marker), else anything. */
const MARKERS = ['FUZZ:plain', 'FUZZ:ask', 'FUZZ:write', 'FUZZ:shell'] as const;
export type Marker = (typeof MARKERS)[number];
export const goodMessage: fc.Arbitrary<string> = fc
  .tuple(fc.constantFrom(...MARKERS), fc.string({ unit: 'grapheme', maxLength: 40 }))
  .map(([m, t]) => `${m} ${t}`);
const messageValue: fc.Arbitrary<JsonSpec> = fc.oneof(
  { weight: 6, arbitrary: goodMessage },
  { weight: 2, arbitrary: fc.tuple(goodMessage, hostileText).map(([m, t]) => m + t) },
  { weight: 1, arbitrary: fc.constantFrom<JsonSpec>('', ' ', repeat('a', 100_000), repeat('a', 100_001), repeat('\u00e9', 60_000)) },
  { weight: 1, arbitrary: invalidUtf8 },
  { weight: 2, arbitrary: wrongType('string') },
);

const envName = fc.oneof(
  fc.stringMatching(/^[A-Z_][A-Z0-9_]{0,15}$/),
  hostileText,
  fc.constantFrom('1BAD', 'A-B', '', 'PATH', 'LD_PRELOAD', 'a'.repeat(300)),
);
const stringRecord = (minValue: number): fc.Arbitrary<JsonSpec> =>
  fc.oneof(
    {
      weight: 3,
      arbitrary: fc
        .array(fc.tuple(fc.stringMatching(/^[A-Z][A-Z0-9_]{0,10}$/), fc.string({ minLength: minValue, maxLength: 20 })), { maxLength: 3 })
        .map(obj),
    },
    { weight: 3, arbitrary: fc.array(fc.tuple(envName, fc.oneof(hostileText, jsonLeaf, anyJson)), { maxLength: 4 }).map(obj) },
    {
      weight: 1,
      arbitrary: fc.integer({ min: 40, max: 120 }).map((n) => obj(Array.from({ length: n }, (_, i) => [`K${i}`, 'value'] as const))),
    },
    { weight: 1, arbitrary: fc.constantFrom<JsonSpec>(obj([['A', repeat('v', 40_000)]]), obj([['A', { $deep: 40, open: '[' }]])) },
    { weight: 2, arbitrary: wrongType('object') },
  );

const mcpServers: fc.Arbitrary<JsonSpec> = fc.oneof(
  fc.constantFrom<JsonSpec>(
    obj([['docs', obj([['url', 'http://127.0.0.1:9/mcp']])]]),
    obj([
      [
        'docs',
        obj([
          ['url', 'https://mcp.invalid/'],
          ['headers', obj([['X-Key', '{{secrets.TOKEN}}']])],
        ]),
      ],
    ]),
    obj([['docs', obj([['url', 'ftp://x']])]]),
    obj([['bad name!', obj([['url', 'https://mcp.invalid/']])]]),
    obj([
      [
        'docs',
        obj([
          ['command', 'sh'],
          ['args', { $array: ['-c', 'id'] }],
        ]),
      ],
    ]),
    obj(Array.from({ length: 12 }, (_, i) => [`s${i}`, obj([['url', 'https://mcp.invalid/']])] as const)),
  ),
  fc.array(fc.tuple(hostileText, anyJson), { maxLength: 3 }).map(obj),
  wrongType('object'),
);

const booleanValue: fc.Arbitrary<JsonSpec> = fc.oneof(
  { weight: 4, arbitrary: fc.boolean() },
  { weight: 1, arbitrary: wrongType('boolean') },
);

/** Create fields: each present or not, each valid or not, plus unknown and odd keys. */
const createJson: fc.Arbitrary<JsonSpec> = fc
  .record(
    {
      message: messageValue,
      autoExecute: booleanValue,
      showInHistory: booleanValue,
      secrets: stringRecord(4),
      env: stringRecord(0),
      mcpServers,
      extra: fc.array(
        fc.tuple(
          fc.oneof(hostileText, fc.constantFrom('autoexecute', 'webhookUrl', 'maxTokens', 'files', '__proto__', 'constructor', 'message')),
          anyJson,
        ),
        { maxLength: 2 },
      ),
    },
    { requiredKeys: [] },
  )
  .map(({ extra, ...fields }) => obj([...Object.entries(fields), ...(extra ?? [])]));

/** A valid create: the message decides what the scripted model does. */
export const validCreateJson: fc.Arbitrary<JsonSpec> = fc
  .record({
    message: goodMessage,
    autoExecute: fc.boolean(),
    showInHistory: fc.option(fc.boolean(), { nil: undefined }),
    env: fc.option(fc.constant(obj([['REGION', 'eu']])), { nil: undefined }),
  })
  .map(({ message, autoExecute, showInHistory, env }) =>
    obj([
      ['message', message],
      // Tasks that ask wait for a decision: the pool of calls to approve.
      ['autoExecute', message.startsWith('FUZZ:ask') || message.startsWith('FUZZ:shell') ? false : autoExecute],
      ...(showInHistory === undefined ? [] : [['showInHistory', showInHistory] as const]),
      ...(env === undefined ? [] : [['env', env] as const]),
    ]),
  );

const followUpJson: fc.Arbitrary<JsonSpec> = fc.oneof(
  { weight: 3, arbitrary: goodMessage.map((m) => obj([['message', m]])) },
  {
    weight: 3,
    arbitrary: fc
      .record({ message: messageValue, extra: fc.array(fc.tuple(hostileText, anyJson), { maxLength: 2 }) }, { requiredKeys: [] })
      .map(({ message, extra }) => obj([...(message === undefined ? [] : [['message', message] as const]), ...(extra ?? [])])),
  },
);

/** A fork's body: an afterEventId (event 1, the first message, is a fork point of every task), perhaps a message and autoExecute. */
const forkJson: fc.Arbitrary<JsonSpec> = fc
  .record(
    {
      afterEventId: fc.oneof(fc.integer({ min: -2, max: 40 }), wrongType('object'), fc.constant<JsonSpec>(1.5)),
      message: messageValue,
      autoExecute: fc.oneof(fc.boolean(), wrongType('boolean')),
      extra: fc.array(fc.tuple(hostileText, anyJson), { maxLength: 1 }),
    },
    { requiredKeys: [] },
  )
  .map(({ afterEventId, message, autoExecute, extra }) =>
    obj([
      ...(afterEventId === undefined ? [] : [['afterEventId', afterEventId] as const]),
      ...(message === undefined ? [] : [['message', message] as const]),
      ...(autoExecute === undefined ? [] : [['autoExecute', autoExecute] as const]),
      ...(extra ?? []),
    ]),
  );

export const OUTCOMES = ['proceed_once', 'proceed_always', 'cancel'];
const approveJson: fc.Arbitrary<JsonSpec> = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...OUTCOMES).map((o) => obj([['outcome', o]])) },
  {
    weight: 1,
    arbitrary: fc
      .constantFrom('PROCEED_ONCE', 'proceed', 'expired', 'approve', ' cancel', 'cancel\u0000')
      .map((o) => obj([['outcome', o]])),
  },
  {
    weight: 2,
    arbitrary: fc
      .record(
        {
          outcome: fc.oneof(fc.constantFrom(...OUTCOMES), wrongType('string')),
          extra: fc.array(fc.tuple(hostileText, anyJson), { maxLength: 2 }),
        },
        { requiredKeys: [] },
      )
      .map(({ outcome, extra }) => obj([...(outcome === undefined ? [] : [['outcome', outcome] as const]), ...(extra ?? [])])),
  },
);

/** Whole bodies that are not the object an endpoint wants: other JSON, broken JSON, deep, huge, empty. */
const strayJson: fc.Arbitrary<JsonSpec> = fc.oneof(
  anyJson,
  fc.constantFrom<JsonSpec>(
    { $raw: '' },
    { $raw: '   ' },
    { $raw: 'null' },
    { $raw: '{"message": ' },
    { $raw: '{"message":"x"} trailing' },
    { $raw: "{'message':'x'}" },
    { $raw: '{"message":"x",}' },
    { $raw: '{"message":NaN}' },
    { $raw: '\ufeff{"message":"bom"}' },
    { $raw: '{"__proto__":{"polluted":true},"message":"FUZZ:plain proto"}' },
    { $raw: '{"constructor":{"prototype":{"polluted":true}},"message":"FUZZ:plain ctor"}' },
    { $raw: '{"message":"FUZZ:plain a","message":"FUZZ:plain b"}' },
    { $deep: 31, open: '[' },
    { $deep: 33, open: '[' },
    { $deep: 32, open: '{"a":' },
    { $deep: 34, open: '{"a":' },
    { $deep: 10_000, open: '[' },
    { $deep: 100_000, open: '{"a":' },
  ),
  fc.integer({ min: 30, max: 36 }).map((n): JsonSpec =>
    obj([
      ['message', 'FUZZ:plain deep'],
      ['env', { $deep: n, open: '{"a":' }],
    ]),
  ),
  // Over and under the 1 MiB body limit the suite sets (UPLOAD_MAX_BYTES).
  fc.constantFrom(1_048_000, 1_048_600, 1_500_000).map((n): JsonSpec => obj([['message', repeat('a', n)]])),
);

// ---------------------------------------------------------------------------------------------
// Multipart bodies

export interface PartSpec {
  readonly name: Text;
  readonly filename?: Text;
  readonly contentType?: string;
  readonly value: Text;
  /** 'missing': no Content-Disposition; 'garbled': one that does not parse; 'huge-header': a part header of 90 KB. */
  readonly disposition: 'normal' | 'missing' | 'garbled' | 'huge-header' | 'rfc5987';
}

export interface MultipartSpec {
  readonly boundary: string;
  /** The Content-Type header (may name no boundary, another one, a quoted one). */
  readonly contentType: Text;
  readonly parts: readonly PartSpec[];
  readonly preamble: string;
  readonly newline: '\r\n' | '\n';
  /** 'close': proper end; 'open': no closing boundary; 'cut': body cut at `cutPerMille` of its length. */
  readonly ending: 'close' | 'open' | 'no-final-newline' | 'cut';
  readonly cutPerMille: number;
}

export function serializeMultipart(spec: MultipartSpec): Buffer {
  const nl = spec.newline;
  let body = spec.preamble;
  for (const part of spec.parts) {
    body += `--${spec.boundary}${nl}`;
    const name = expand(part.name);
    const filename = part.filename === undefined ? '' : `; filename="${expand(part.filename)}"`;
    if (part.disposition === 'normal') body += `Content-Disposition: form-data; name="${name}"${filename}${nl}`;
    if (part.disposition === 'garbled') body += `Content-Disposition: form-data; name=${name}"; ;;${filename}${nl}`;
    if (part.disposition === 'rfc5987')
      body += `Content-Disposition: form-data; name="${name}"; filename*=UTF-8''${percentEncode(expand(part.filename ?? 'f.txt'))}${nl}`;
    if (part.disposition === 'huge-header')
      body += `Content-Disposition: form-data; name="${name}"${filename}; x="${'h'.repeat(90_000)}"${nl}`;
    if (part.contentType !== undefined) body += `Content-Type: ${part.contentType}${nl}`;
    body += `${nl}${expand(part.value)}${nl}`;
  }
  if (spec.ending !== 'open') body += `--${spec.boundary}--${spec.ending === 'no-final-newline' ? '' : nl}`;
  const bytes = Buffer.from(body, 'latin1');
  return spec.ending === 'cut' ? bytes.subarray(0, Math.floor((bytes.length * spec.cutPerMille) / 1000)) : bytes;
}

const boundaryArb = fc.oneof(
  { weight: 4, arbitrary: fc.stringMatching(/^[A-Za-z0-9'()+_,\-.]{1,30}$/) },
  { weight: 1, arbitrary: fc.constantFrom('B', '-', 'a'.repeat(70), 'a'.repeat(71), 'b'.repeat(300), 'with space', '--', 'x"y') },
);

const fieldPart = (name: Text, value: fc.Arbitrary<Text>): fc.Arbitrary<PartSpec> =>
  value.map((v) => ({ name, value: v, disposition: 'normal' as const }));
const textValue: fc.Arbitrary<Text> = fc.oneof(
  goodMessage.map(utf8Bytes),
  hostileText.map(utf8Bytes),
  fc.constantFrom<Text>(
    'true',
    'false',
    'TRUE',
    '{"REGION":"eu"}',
    '{"TOKEN":"abcdef"}',
    '{"A":',
    '[1]',
    'null',
    '"quoted"',
    repeat('v', 20_000),
    repeat('v', 120_000),
    repeat('{"a":', 40),
    repeat('[', 100_000),
  ),
);
const filePart: fc.Arbitrary<PartSpec> = fc.record({
  name: fc.constantFrom<Text>('files', 'files', 'files', 'file', 'files[]', ''),
  filename: fc.oneof(
    { weight: 4, arbitrary: fc.stringMatching(/^[a-z]{1,8}\.(txt|csv|md|zip|bin)$/) },
    {
      weight: 1,
      arbitrary: fc.constantFrom<Text>(
        '',
        '.',
        '..',
        '../escape.txt',
        '/etc/passwd',
        'a/b.txt',
        'a\\b.txt',
        'nul\u0000.txt',
        repeat('n', 300),
        utf8Bytes('\u00e9t\u00e9.txt'),
        utf8Bytes('\ud800.txt'),
      ),
    },
  ),
  contentType: fc.option(fc.constantFrom('text/plain', 'application/zip', 'application/octet-stream', ''), { nil: undefined }),
  value: fc.oneof(
    fc.string({ maxLength: 50 }),
    fc.constantFrom<Text>('PK\u0003\u0004broken zip', '\u00ff\u00fe\u0000\u0001', repeat('x', 20_000)),
  ),
  disposition: fc.constantFrom('normal', 'normal', 'normal', 'rfc5987'),
});
const oddPart: fc.Arbitrary<PartSpec> = fc.record(
  {
    name: fc.oneof(
      fc.constantFrom<Text>(
        'message',
        'autoExecute',
        'showInHistory',
        'env',
        'secrets',
        'mcpServers',
        'extra',
        '',
        '__proto__',
        'toString',
      ),
      hostileText.map(utf8Bytes),
      fc.constantFrom<Text>(repeat('n', 10_000), repeat('n', 70_000)),
    ),
    value: textValue,
    // A part typed application/json is parsed by @fastify/multipart before the API sees it.
    contentType: fc.constantFrom(
      'application/json',
      'application/json; charset=utf-8',
      'text/plain; charset=utf-8',
      'text/plain; charset=utf-16',
    ),
    disposition: fc.constantFrom('normal', 'missing', 'garbled', 'huge-header'),
  },
  { requiredKeys: ['name', 'value', 'disposition'] },
);

export const multipartBody = (valid: boolean): fc.Arbitrary<MultipartSpec> =>
  fc
    .record({
      boundary: boundaryArb,
      contentTypeForm: valid
        ? fc.constant('normal' as const)
        : fc.oneof(
            { weight: 8, arbitrary: fc.constant('normal' as const) },
            { weight: 1, arbitrary: fc.constantFrom('quoted', 'none', 'empty', 'other', 'upper') },
          ),
      parts: valid
        ? fc
            .tuple(
              fieldPart('message', goodMessage.map(utf8Bytes)),
              fc.array(fieldPart('autoExecute', fc.constantFrom('true', 'false')), { maxLength: 1 }),
              fc.uniqueArray(
                filePart.filter((p) => p.disposition === 'normal' && p.name === 'files' && !expand(p.filename ?? '').endsWith('.zip')),
                { maxLength: 3, selector: (p) => expand(p.filename ?? '') },
              ),
            )
            .map(([m, a, f]) => [m, ...a, ...f])
        : fc.oneof(
            { weight: 3, arbitrary: fc.array(fc.oneof(fieldPart('message', textValue), filePart, oddPart), { maxLength: 6 }) },
            // Many parts: over UPLOAD_MAX_FILES (5 here), over the 20 fields limit.
            {
              weight: 1,
              arbitrary: fc.tuple(fc.integer({ min: 6, max: 40 }), fc.boolean()).map(([n, files]) =>
                Array.from({ length: n }, (_, i): PartSpec => ({
                  name: files ? 'files' : `f${i}`,
                  filename: files ? `f${i}.txt` : undefined,
                  value: 'x',
                  disposition: 'normal',
                })),
              ),
            },
            // A big last part busboy skips (no usable Content-Disposition).
            {
              weight: 1,
              arbitrary: fc
                .tuple(
                  goodMessage.map(utf8Bytes),
                  fc.integer({ min: 10_000, max: 60_000 }),
                  fc.constantFrom('missing' as const, 'garbled' as const),
                )
                .map(([m, n, disposition]): PartSpec[] => [
                  { name: 'message', value: m, disposition: 'normal' },
                  { name: 'note', value: repeat('v', n), disposition },
                ]),
            },
          ),
      preamble: fc.constantFrom('', '', 'preamble text\r\n'),
      newline: valid
        ? fc.constant('\r\n' as const)
        : fc.oneof({ weight: 5, arbitrary: fc.constant('\r\n' as const) }, { weight: 1, arbitrary: fc.constant('\n' as const) }),
      ending: valid
        ? fc.constant('close' as const)
        : fc.oneof(
            { weight: 5, arbitrary: fc.constant('close' as const) },
            { weight: 1, arbitrary: fc.constantFrom('open' as const, 'no-final-newline' as const, 'cut' as const) },
          ),
      cutPerMille: fc.integer({ min: 0, max: 999 }),
    })
    .map(({ contentTypeForm, ...spec }) => {
      const contentType: Record<typeof contentTypeForm, Text> = {
        normal: `multipart/form-data; boundary=${spec.boundary}`,
        quoted: `multipart/form-data; boundary="${spec.boundary}"`,
        none: 'multipart/form-data',
        empty: 'multipart/form-data; boundary=',
        other: 'multipart/form-data; boundary=not-the-one',
        upper: `MULTIPART/FORM-DATA; BOUNDARY=${spec.boundary}`,
      };
      return { ...spec, contentType: contentType[contentTypeForm] };
    });

// ---------------------------------------------------------------------------------------------
// Requests

export const ENDPOINTS = [
  'POST /tasks',
  'GET /tasks',
  'GET /tasks/{id}',
  'POST /tasks/{id}/messages',
  'POST /tasks/{id}/cancel',
  'POST /tasks/{id}/fork',
  'POST /tasks/{id}/tools/{callId}/approve',
  'GET /tasks/{id}/stream',
  'GET /tasks/{id}/events',
  'GET /tasks/{id}/artifacts',
  'GET /tasks/{id}/artifacts/download',
  'GET /tasks/{id}/files',
  'GET /tasks/{id}/files/download',
  'GET /tasks/{id}/webhook-deliveries',
  'POST /tasks/{id}/webhook-deliveries/{deliveryId}/redeliver',
  'GET /healthz',
  'GET /api/docs-json',
  'unknown route or method',
  'malformed HTTP',
] as const;
export type Endpoint = (typeof ENDPOINTS)[number];

/** Whose task an id names: a real one of tenant A or B (picked from the pools), or generated text. */
export type IdRef =
  | { readonly own: number }
  | { readonly other: number }
  | { readonly pendingTask: number }
  | { readonly artifactTask: number }
  | { readonly deliveryTask: number }
  | { readonly text: Text };
export type CallRef = { readonly pendingCall: number } | { readonly delivery: number } | { readonly text: Text };
export type QueryValue = Text | { readonly artifactPath: number };
export type Segment = string | { readonly id: IdRef } | { readonly call: CallRef };

/** `{A}` and `{B}` in a value stand for the two tenants' keys. `grants`: which tenant the header names, if any. */
export interface AuthSpec {
  readonly values: readonly Text[];
  readonly grants: 'A' | 'B' | 'none' | 'unknown';
}

export type BodySpec =
  | { readonly json: JsonSpec; readonly encoding: 'utf8' | 'latin1' | 'utf16le' }
  | { readonly multipart: MultipartSpec }
  | { readonly raw: Text };

/**
 * How the body is framed: its true length, chunked (chunk sizes cycled, maybe with extensions
 * and a trailer), a length short of the body (the rest is read as a next request), or a
 * declared length far over the limit with only a little of the body sent.
 */
export type Framing =
  | { readonly kind: 'length' }
  | { readonly kind: 'chunked'; readonly sizes: readonly number[]; readonly extension: boolean; readonly trailer: boolean }
  | { readonly kind: 'short-length'; readonly by: number }
  | { readonly kind: 'declared-huge' };

export interface HttpRequestSpec {
  readonly endpoint: Endpoint;
  readonly method: string;
  readonly path: readonly Segment[];
  readonly query?: readonly (readonly [Text, QueryValue])[];
  readonly auth: AuthSpec;
  readonly contentType?: Text;
  readonly headers: readonly (readonly [Text, Text])[];
  readonly body?: BodySpec;
  readonly framing: Framing;
  readonly version: 'HTTP/1.1' | 'HTTP/1.0';
  readonly close: boolean;
  /** What the contract fixes for this request (oracle-requests.ts); absent: any answer within the contract. */
  readonly expected?: Expectation;
}

/** The error codes a request can be refused with for a defect of its own (docs/api.md "Errors"). */
export type RefusalCode = 'VALIDATION_ERROR' | 'AUTH_REQUIRED' | 'INVALID_API_KEY' | 'NOT_FOUND' | 'PAYLOAD_TOO_LARGE';

/** The answer the contract fixes: its route's success status, or one error code for the one defect named. */
export type Expectation = { readonly success: true } | { readonly code: RefusalCode; readonly because: string };

/** Bytes that are not (quite) HTTP, with `{A}` for tenant A's key and `{ID}` for a real task id. */
export interface RawRequestSpec {
  readonly endpoint: 'malformed HTTP';
  readonly raw: Text;
  /** Responses this text can draw (pipelined requests); the suite waits a little for more. */
  readonly responses: number;
  /** Whether the requests in it are HEAD requests, per response. */
  readonly heads?: readonly boolean[];
}

export type FuzzRequest = HttpRequestSpec | RawRequestSpec;

export const VALID_AUTH: fc.Arbitrary<AuthSpec> = fc.constantFrom<AuthSpec>(
  { values: ['Bearer {A}'], grants: 'A' },
  { values: ['Bearer {A}'], grants: 'A' },
  { values: ['Bearer {A}'], grants: 'A' },
  { values: ['bearer {A}'], grants: 'A' },
  { values: ['BEARER   {A}  '], grants: 'A' },
  { values: ['Bearer\t{A}'], grants: 'A' },
);
const BAD_AUTH: fc.Arbitrary<AuthSpec> = fc.oneof(
  fc.constantFrom<AuthSpec>(
    { values: [], grants: 'none' },
    { values: [''], grants: 'none' },
    { values: ['Bearer'], grants: 'none' },
    { values: ['Bearer '], grants: 'none' },
    { values: ['{A}'], grants: 'none' },
    { values: ['Basic dGVzdDp0ZXN0'], grants: 'none' },
    { values: ['Token {A}'], grants: 'none' },
    { values: ['Bearer {A} extra'], grants: 'none' },
    { values: ['Bearer {A}x'], grants: 'none' },
    { values: ['Bearer x{A}'], grants: 'none' },
    { values: ['Bearer "{A}"'], grants: 'none' },
    { values: ['Bearer not-a-key'], grants: 'none' },
    { values: ['Bearer \u00ff\u00fe\u00e9'], grants: 'none' },
    { values: ['Bearer \u00c3\u00a9'], grants: 'none' },
    { values: ['Bearer a\u0000b'], grants: 'none' },
    { values: ['Bearer a\u0001b'], grants: 'none' },
    { values: ['Bearer {A}', 'Bearer not-a-key'], grants: 'unknown' },
    { values: ['Bearer not-a-key', 'Bearer {A}'], grants: 'unknown' },
    { values: ['Bearer {A}', 'Bearer {B}'], grants: 'unknown' },
  ),
  fc.integer({ min: 50, max: 20_000 }).map((n): AuthSpec => ({ values: [['Bearer ', repeat('k', n)]], grants: 'none' })),
  hostileText.map((t): AuthSpec => ({ values: [`Bearer ${utf8Bytes(t)}`], grants: 'unknown' })),
);
const authArb: fc.Arbitrary<AuthSpec> = fc.oneof(
  { weight: 14, arbitrary: VALID_AUTH },
  { weight: 2, arbitrary: fc.constant<AuthSpec>({ values: ['Bearer {B}'], grants: 'B' }) },
  { weight: 4, arbitrary: BAD_AUTH },
);

const idRef: fc.Arbitrary<IdRef> = fc.oneof(
  { weight: 10, arbitrary: fc.nat().map((own) => ({ own })) },
  { weight: 2, arbitrary: fc.nat().map((other) => ({ other })) },
  {
    weight: 5,
    arbitrary: fc
      .oneof(
        fc.constant<Text>('task_00000000000000000000000000000000'),
        fc.stringMatching(/^task_[0-9a-f]{32}$/),
        hostileText.map(percentEncode),
        fc.constantFrom<Text>(
          '%',
          '%G0',
          '%E0%A4%A',
          '%FF',
          '%C0%AF',
          '%ED%A0%80',
          '%F0%9F',
          '%00',
          '%2F',
          '%2e%2e',
          '..',
          '.',
          '',
          '%20',
          '+',
          '*',
          ';x=1',
          '~',
          '__proto__',
          'constructor',
          'null',
          '-1',
        ),
        fc.array(fc.integer({ min: 0x80, max: 0xff }), { minLength: 1, maxLength: 6 }).map((bytes) => String.fromCharCode(...bytes)),
        fc.integer({ min: 95, max: 110 }).map((n) => repeat('a', n)),
        fc.integer({ min: 1_000, max: 20_000 }).map((n) => repeat('a', n)),
      )
      .map((text) => ({ text })),
  },
);
const callRef: fc.Arbitrary<CallRef> = fc.oneof(
  fc.constant<CallRef>({ text: 'call_unknown' }),
  fc.stringMatching(/^call_[A-Za-z0-9]{1,24}$/).map((text) => ({ text })),
  hostileText.map((t) => ({ text: percentEncode(t) })),
  fc.constantFrom<CallRef>(
    { text: '%00' },
    { text: '%ED%A0%80' },
    { text: '%E0%A4%A' },
    { text: repeat('c', 101) },
    { text: repeat('c', 5_000) },
    { text: '\u00ff' },
  ),
);

/** A generated webhook delivery id, never a real one: real ones are redelivered by oracle-requests.ts, whose answers are known. */
const deliveryRef: fc.Arbitrary<CallRef> = fc.oneof(
  fc.stringMatching(/^wh_[a-f0-9]{32}_[0-9]{1,3}$/).map((text) => ({ text })),
  hostileText.map((t) => ({ text: percentEncode(t) })),
  fc.constantFrom<CallRef>({ text: '%00' }, { text: '%E0%A4%A' }, { text: repeat('w', 101) }, { text: repeat('w', 5_000) }),
);

/** Mostly the endpoint's method; sometimes another known one, or one Node or Fastify do not route. */
const methodArb = (own: string): fc.Arbitrary<string> =>
  fc.oneof(
    { weight: 20, arbitrary: fc.constant(own) },
    { weight: 2, arbitrary: fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS') },
    { weight: 1, arbitrary: fc.constantFrom('PROPFIND', 'SEARCH', 'QUERY', 'TRACE', 'CONNECT', 'get', 'FOO', 'P\u00d6ST', 'GET GET') },
  );

const CONTENT_TYPES: readonly Text[] = [
  'application/json; charset=utf-8',
  'application/json; charset=UTF-8',
  'application/json;charset=latin1',
  'application/json; charset=utf-16',
  'application/JSON',
  'APPLICATION/JSON',
  'application/json ;',
  'application/json; boundary=x',
  'application/vnd.api+json',
  'application/json-patch+json',
  'text/json',
  'text/plain',
  'text/plain; charset=utf-8',
  'application/x-www-form-urlencoded',
  'multipart/form-data',
  'multipart/mixed; boundary=B',
  'application/octet-stream',
  '*/*',
  '',
  ';',
  'application/json\u00ff',
  repeat('a', 10_000),
  ['application/json; ', repeat('x=y; ', 1_000)],
];
const contentTypeArb = (json: boolean): fc.Arbitrary<Text | undefined> =>
  fc.oneof(
    { weight: json ? 16 : 1, arbitrary: fc.constant<Text>('application/json') },
    { weight: json ? 2 : 6, arbitrary: fc.constant(undefined) },
    { weight: 4, arbitrary: fc.constantFrom(...CONTENT_TYPES) },
  );

const headerValue: fc.Arbitrary<Text> = fc.oneof(
  hostileText.map(utf8Bytes),
  fc.constantFrom<Text>('', ' ', '\u00ff', 'a\u0000b', 'a\rb', 'x, y', repeat('v', 8_000), repeat('v', 17_000)),
);
const extraHeaders: fc.Arbitrary<readonly (readonly [Text, Text])[]> = fc.oneof(
  { weight: 6, arbitrary: fc.constant([]) },
  {
    weight: 3,
    arbitrary: fc.array(
      fc.oneof(
        fc.tuple(
          fc.constantFrom<Text>(
            'x-fuzz',
            'accept',
            'accept-charset',
            'accept-encoding',
            'cookie',
            'origin',
            'referer',
            'x-forwarded-for',
            'x-request-id',
            'if-none-match',
            'range',
            'last-event-id',
          ),
          headerValue,
        ),
        fc.constantFrom<readonly [Text, Text]>(
          ['content-encoding', 'gzip'],
          ['content-encoding', 'br'],
          ['expect', '100-continue'],
          ['expect', 'something-else'],
          ['transfer-encoding', 'gzip'],
          ['transfer-encoding', 'chunked'],
          ['content-length', '5'],
          ['content-length', '-1'],
          ['content-length', 'abc'],
          ['host', 'evil.example'],
          ['upgrade', 'h2c'],
          ['connection', 'Upgrade, HTTP2-Settings'],
          ['te', 'trailers'],
          ['x-http-method-override', 'DELETE'],
          ['accept', 'text/event-stream'],
          ['last-event-id', '0'],
          ['last-event-id', '99999999999999999999'],
        ),
        fc.tuple(fc.constantFrom<Text>('bad name', 'x:y', '', '\u00ff', 'x\u0000', repeat('n', 5_000)), fc.constant<Text>('v')),
        fc.constant<readonly [Text, Text]>(['x-many', repeat('v', 200)]),
      ),
      { minLength: 1, maxLength: 3 },
    ),
  },
  { weight: 1, arbitrary: fc.integer({ min: 90, max: 300 }).map((n) => Array.from({ length: n }, (_, i) => [`x-h${i}`, 'v'] as const)) },
);

export const framingArb = (hasBody: boolean): fc.Arbitrary<Framing> =>
  hasBody
    ? fc.oneof(
        { weight: 14, arbitrary: fc.constant<Framing>({ kind: 'length' }) },
        {
          weight: 4,
          arbitrary: fc.record({
            kind: fc.constant('chunked' as const),
            sizes: fc.array(fc.integer({ min: 1, max: 70_000 }), { minLength: 1, maxLength: 4 }),
            extension: fc.boolean(),
            trailer: fc.boolean(),
          }),
        },
        { weight: 1, arbitrary: fc.integer({ min: 1, max: 20 }).map((by): Framing => ({ kind: 'short-length', by })) },
        { weight: 1, arbitrary: fc.constant<Framing>({ kind: 'declared-huge' }) },
      )
    : fc.oneof(
        { weight: 12, arbitrary: fc.constant<Framing>({ kind: 'length' }) },
        { weight: 1, arbitrary: fc.constant<Framing>({ kind: 'chunked', sizes: [10], extension: false, trailer: false }) },
      );

export const jsonBody = (json: fc.Arbitrary<JsonSpec>): fc.Arbitrary<BodySpec> =>
  fc
    .tuple(
      json,
      fc.constantFrom('utf8', 'utf8', 'utf8', 'utf8', 'utf8', 'utf8', 'latin1', 'utf16le') as fc.Arbitrary<'utf8' | 'latin1' | 'utf16le'>,
    )
    .map(([j, encoding]) => ({ json: j, encoding }));
const rawBody: fc.Arbitrary<BodySpec> = fc.oneof(
  hostileText.map((t): BodySpec => ({ raw: utf8Bytes(t) })),
  fc.constantFrom<BodySpec>(
    { raw: 'message=hi&autoExecute=false' },
    { raw: '\u001f\u008b\u0008\u0000garbage' },
    { raw: '\u0000\u0000\u0000' },
  ),
);

interface EndpointShape {
  readonly endpoint: Endpoint;
  readonly method: string;
  readonly path: fc.Arbitrary<readonly Segment[]>;
  readonly query?: fc.Arbitrary<readonly (readonly [Text, QueryValue])[] | undefined>;
  readonly body?: fc.Arbitrary<BodySpec | undefined>;
  /** Whether the endpoint reads a JSON body (the content type then defaults to JSON). */
  readonly json: boolean;
}

const task = (rest: readonly Segment[] = []) => idRef.map((id): readonly Segment[] => ['api', 'v1', 'tasks', { id }, ...rest]);

const queryPairs = (keys: readonly string[], values: fc.Arbitrary<QueryValue>) =>
  fc.array(
    fc.tuple(
      fc.oneof(
        { weight: 4, arbitrary: fc.constantFrom<Text>(...keys) },
        {
          weight: 1,
          arbitrary: fc.oneof(
            hostileText.map(percentEncode),
            fc.constantFrom<Text>('__proto__', 'constructor', 'limit[]', 'limit[0]', '__proto__[x]', '', '=', '&'),
          ),
        },
      ),
      values,
    ),
    { maxLength: 4 },
  );
const queryText: fc.Arbitrary<Text> = fc.oneof(
  hostileText.map(percentEncode),
  fc.constantFrom<Text>(
    '',
    '0',
    '1',
    '20',
    '100',
    '101',
    '-1',
    'abc',
    '1.5',
    '1e2',
    '%20',
    '0x10',
    '99999999999999999999',
    'true',
    'false',
    'TRUE',
    'maybe',
    '%00',
    '%ED%A0%80',
    '%E0%A4%A',
    '%FF',
    '\u00ff',
    repeat('9', 5_000),
  ),
);

const ENDPOINT_SHAPES: readonly (EndpointShape & { readonly weight: number })[] = [
  {
    endpoint: 'POST /tasks',
    method: 'POST',
    weight: 18,
    json: true,
    path: fc.constant(['api', 'v1', 'tasks']),
    body: fc.oneof(
      { weight: 5, arbitrary: jsonBody(validCreateJson) },
      { weight: 6, arbitrary: jsonBody(createJson) },
      { weight: 2, arbitrary: jsonBody(strayJson) },
      { weight: 2, arbitrary: multipartBody(true).map((multipart): BodySpec => ({ multipart })) },
      { weight: 3, arbitrary: multipartBody(false).map((multipart): BodySpec => ({ multipart })) },
      { weight: 1, arbitrary: rawBody },
    ),
  },
  {
    endpoint: 'GET /tasks',
    method: 'GET',
    weight: 6,
    json: false,
    path: fc.constant(['api', 'v1', 'tasks']),
    query: fc.option(queryPairs(['limit', 'cursor', 'includeHidden'], queryText), { nil: undefined }),
  },
  { endpoint: 'GET /tasks/{id}', method: 'GET', weight: 7, json: false, path: task() },
  {
    endpoint: 'POST /tasks/{id}/messages',
    method: 'POST',
    weight: 9,
    json: true,
    path: task(['messages']),
    body: fc.oneof(
      { weight: 6, arbitrary: jsonBody(followUpJson) },
      { weight: 2, arbitrary: jsonBody(strayJson) },
      { weight: 1, arbitrary: multipartBody(true).map((multipart): BodySpec => ({ multipart })) },
      { weight: 1, arbitrary: rawBody },
    ),
  },
  {
    endpoint: 'POST /tasks/{id}/fork',
    method: 'POST',
    weight: 5,
    json: true,
    path: task(['fork']),
    body: fc.oneof(
      { weight: 6, arbitrary: jsonBody(forkJson) },
      { weight: 2, arbitrary: jsonBody(strayJson) },
      { weight: 1, arbitrary: rawBody },
    ),
  },
  {
    endpoint: 'POST /tasks/{id}/cancel',
    method: 'POST',
    weight: 5,
    json: false,
    path: task(['cancel']),
    body: fc.oneof(
      { weight: 6, arbitrary: fc.constant(undefined) },
      { weight: 2, arbitrary: jsonBody(fc.oneof(anyJson, strayJson)) },
      { weight: 1, arbitrary: rawBody },
    ),
  },
  {
    endpoint: 'POST /tasks/{id}/tools/{callId}/approve',
    method: 'POST',
    weight: 10,
    json: true,
    path: fc.oneof(
      {
        weight: 3,
        arbitrary: fc
          .nat()
          .map((n): readonly Segment[] => [
            'api',
            'v1',
            'tasks',
            { id: { pendingTask: n } },
            'tools',
            { call: { pendingCall: n } },
            'approve',
          ]),
      },
      {
        weight: 2,
        arbitrary: fc
          .tuple(idRef, callRef)
          .map(([id, call]): readonly Segment[] => ['api', 'v1', 'tasks', { id }, 'tools', { call }, 'approve']),
      },
    ),
    body: fc.oneof(
      { weight: 6, arbitrary: jsonBody(approveJson) },
      { weight: 2, arbitrary: jsonBody(strayJson) },
      { weight: 1, arbitrary: rawBody },
    ),
  },
  {
    endpoint: 'GET /tasks/{id}/stream',
    method: 'GET',
    weight: 6,
    json: false,
    path: task(['stream']),
    query: fc.option(queryPairs(['after'], queryText), { nil: undefined }),
  },
  {
    endpoint: 'GET /tasks/{id}/events',
    method: 'GET',
    weight: 4,
    json: false,
    path: task(['events']),
    query: fc.option(queryPairs(['after', 'limit'], queryText), { nil: undefined }),
  },
  { endpoint: 'GET /tasks/{id}/artifacts', method: 'GET', weight: 5, json: false, path: task(['artifacts']) },
  {
    endpoint: 'GET /tasks/{id}/files',
    method: 'GET',
    weight: 4,
    json: false,
    path: task(['files']),
    query: fc.option(queryPairs(['at', 'limit', 'cursor'], queryText), { nil: undefined }),
  },
  {
    endpoint: 'GET /tasks/{id}/files/download',
    method: 'GET',
    weight: 4,
    json: false,
    path: fc.oneof(
      fc.nat().map((n): readonly Segment[] => ['api', 'v1', 'tasks', { id: { artifactTask: n } }, 'files', 'download']),
      task(['files', 'download']),
    ),
    query: fc.oneof(
      fc.nat().map((n) => [['path', { artifactPath: n }] as const]),
      queryPairs(
        ['path', 'at'],
        fc.oneof(queryText, fc.constantFrom<Text>('../etc/passwd', '/etc/passwd', 'downloads/../../x', '0', '99999')),
      ),
    ),
  },
  { endpoint: 'GET /tasks/{id}/webhook-deliveries', method: 'GET', weight: 3, json: false, path: task(['webhook-deliveries']) },
  {
    endpoint: 'POST /tasks/{id}/webhook-deliveries/{deliveryId}/redeliver',
    method: 'POST',
    weight: 3,
    json: false,
    path: fc
      .tuple(idRef, deliveryRef)
      .map(([id, call]): readonly Segment[] => ['api', 'v1', 'tasks', { id }, 'webhook-deliveries', { call }, 'redeliver']),
    body: fc.oneof({ weight: 6, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: rawBody }),
  },
  {
    endpoint: 'GET /tasks/{id}/artifacts/download',
    method: 'GET',
    weight: 7,
    json: false,
    path: fc.oneof(
      {
        weight: 1,
        arbitrary: fc.nat().map((n): readonly Segment[] => ['api', 'v1', 'tasks', { id: { artifactTask: n } }, 'artifacts', 'download']),
      },
      { weight: 1, arbitrary: task(['artifacts', 'download']) },
    ),
    query: fc.oneof(
      { weight: 3, arbitrary: fc.nat().map((n) => [['path', { artifactPath: n }] as const]) },
      {
        weight: 3,
        arbitrary: queryPairs(
          ['path'],
          fc.oneof(
            queryText,
            fc.constantFrom<Text>(
              'downloads/r.md',
              'downloads/',
              'downloads',
              '../etc/passwd',
              '/etc/passwd',
              'downloads/../../x',
              'downloads/%2e%2e/%2e%2e/x',
              'downloads/a%00b',
              '.',
              'data.csv',
              repeat('downloads/a/', 400),
            ),
          ),
        ),
      },
    ),
  },
  { endpoint: 'GET /healthz', method: 'GET', weight: 2, json: false, path: fc.constant(['healthz']) },
  {
    endpoint: 'GET /api/docs-json',
    method: 'GET',
    weight: 1,
    json: false,
    path: fc.constantFrom<readonly Segment[]>(
      ['api', 'docs-json'],
      ['api', 'docs-json'],
      ['api', 'docs'],
      ['api', 'docs', 'swagger-ui.css'],
    ),
  },
  {
    endpoint: 'unknown route or method',
    method: 'GET',
    weight: 5,
    json: false,
    path: fc.oneof(
      fc.constantFrom<readonly Segment[]>(
        [''],
        ['api'],
        ['api', 'v1'],
        ['api', 'v2', 'tasks'],
        ['api', 'v1', 'task'],
        ['API', 'v1', 'tasks'],
        ['api', 'v1', 'tasks', ''],
        ['healthz', ''],
        ['healthz', 'x'],
        ['favicon.ico'],
        ['.env'],
        ['api', 'docs', '..', '..', 'etc', 'passwd'],
        ['api', 'docs', 'nope.js'],
        ['api', 'v1', 'tasks', 'a', 'b', 'c', 'd'],
        ['', 'api', 'v1', 'tasks'],
        ['%2e%2e', 'healthz'],
      ),
      fc
        .tuple(idRef, fc.constantFrom('unknown', 'tools', 'approve', 'webhooks', 'filez'))
        .map(([id, tail]): readonly Segment[] => ['api', 'v1', 'tasks', { id }, tail]),
      fc
        .tuple(idRef, callRef, fc.constantFrom('reject', 'approve', ''))
        .map(([id, call, tail]): readonly Segment[] => ['api', 'v1', 'tasks', { id }, 'tools', { call }, tail, 'x']),
      fc
        .array(hostileText.map(percentEncode), { minLength: 1, maxLength: 4 })
        .map((segs): readonly Segment[] => ['api', 'v1', ...segs, 'zz']),
    ),
  },
];

const endpointRequest = (shape: EndpointShape): fc.Arbitrary<HttpRequestSpec> =>
  fc
    .record({
      method: methodArb(shape.method),
      path: shape.path,
      query: shape.query ?? fc.constant(undefined),
      auth: authArb,
      body: shape.body ?? fc.constant(undefined),
      headers: extraHeaders,
      contentTypeChoice: contentTypeArb(shape.json),
      chunked: framingArb(true),
      plain: framingArb(false),
      version: fc.constantFrom('HTTP/1.1', 'HTTP/1.1', 'HTTP/1.1', 'HTTP/1.1', 'HTTP/1.1', 'HTTP/1.0') as fc.Arbitrary<
        'HTTP/1.1' | 'HTTP/1.0'
      >,
      close: fc.boolean(),
    })
    .map(({ contentTypeChoice, chunked, plain, ...r }): HttpRequestSpec => {
      const contentType =
        r.body && 'multipart' in r.body && contentTypeChoice === 'application/json'
          ? r.body.multipart.contentType
          : r.body === undefined && contentTypeChoice === 'application/json'
            ? undefined
            : contentTypeChoice;
      // Another method on a known path is counted as an unknown route or method.
      const endpoint = r.method === shape.method ? shape.endpoint : 'unknown route or method';
      return { endpoint, ...r, contentType, framing: r.body === undefined ? plain : chunked };
    });

/** Not HTTP, or HTTP with broken framing, sent as bytes. */
const malformed: fc.Arbitrary<RawRequestSpec> = fc.oneof(
  fc
    .constantFrom<Text>(
      'GARBAGE\r\n\r\n',
      '\u0000\u0001\u0002\u0003\r\n\r\n',
      'GET /healthz HTTP/9.9\r\nHost: x\r\n\r\n',
      'GET /healthz\r\n\r\n',
      'GET /healthz HTTP/1.1\r\n\r\n',
      'GET /healthz HTTP/1.1\nHost: x\n\n',
      'GET /healthz HTTP/1.1\r\nHost: x\r\nBad Header: v\r\n\r\n',
      'GET /healthz HTTP/1.1\r\nHost: x\r\nNoColon\r\n\r\n',
      'GET /healthz HTTP/1.1\r\nHost: x\r\n folded: v\r\n\r\n',
      'GET /healthz HTTP/1.1\r\nHost: x\r\nX: a\r\n b\r\n\r\n',
      'GET  /healthz HTTP/1.1\r\nHost: x\r\n\r\n',
      'GET /api/v1/tasks/\u00ff\u00fe HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {A}\r\n\r\n',
      'GET /api/v1/tasks/\u00c3\u00a9 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {A}\r\n\r\n',
      'GET /api/v1/tasks/a\u0000b HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {A}\r\n\r\n',
      'GET /api/v1/tasks/{ID}#frag HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {A}\r\n\r\n',
      'GET http://x/api/v1/tasks/{ID} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {A}\r\n\r\n',
      'GET * HTTP/1.1\r\nHost: x\r\n\r\n',
      'OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n',
      'CONNECT x:443 HTTP/1.1\r\nHost: x:443\r\n\r\n',
      'GET api/v1/tasks HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {A}\r\n\r\n',
      'POST /api/v1/tasks HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {A}\r\nContent-Type: application/json\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
      'POST /api/v1/tasks HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {A}\r\nContent-Type: application/json\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}x',
      'POST /api/v1/tasks HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {A}\r\nContent-Type: application/json\r\nContent-Length: -5\r\n\r\n',
      'POST /api/v1/tasks HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {A}\r\nContent-Type: application/json\r\nContent-Length: 1e3\r\n\r\n',
      'POST /api/v1/tasks HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {A}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nZZ\r\n{}\r\n0\r\n\r\n',
      'POST /api/v1/tasks HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {A}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}XX0\r\n\r\n',
      'POST /api/v1/tasks HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {A}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked, identity\r\n\r\n2\r\n{}\r\n0\r\n\r\n',
      [
        'POST /api/v1/tasks HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {A}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n2;',
        repeat('e', 20_000),
        '\r\n{}\r\n0\r\n\r\n',
      ],
      'POST /api/v1/tasks HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {A}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffffff\r\n{}\r\n0\r\n\r\n',
      'POST /api/v1/tasks/{ID}/messages HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {A}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{"mes\r\n0\r\nX-Trailer: \u0000\r\n\r\n',
    )
    .map((raw): RawRequestSpec => ({ endpoint: 'malformed HTTP', raw, responses: 1 })),
  // Pipelined: a valid request, then another (valid, or garbage), in one write.
  fc
    .constantFrom<[Text, number]>(
      ['GET /healthz HTTP/1.1\r\nHost: x\r\n\r\nGET /api/v1/tasks/{ID} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {A}\r\n\r\n', 2],
      ['GET /healthz HTTP/1.1\r\nHost: x\r\n\r\nGARBAGE\r\n\r\n', 2],
      [
        'POST /api/v1/tasks/{ID}/cancel HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {A}\r\nContent-Length: 0\r\n\r\nGET /api/v1/tasks/{ID} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {A}\r\nConnection: close\r\n\r\n',
        2,
      ],
      [
        'POST /api/v1/tasks/{ID}/messages HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {A}\r\nContent-Type: application/json\r\nContent-Length: 3\r\n\r\n{"message":"FUZZ:plain smuggled"}',
        2,
      ],
    )
    .map(([raw, responses]): RawRequestSpec => ({ endpoint: 'malformed HTTP', raw, responses })),
  // HEAD is answered without a body.
  fc.constant<RawRequestSpec>({
    endpoint: 'malformed HTTP',
    raw: 'HEAD /api/v1/tasks/{ID} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {A}\r\n\r\n',
    responses: 1,
    heads: [true],
  }),
  // Random bytes, and random bytes after a plausible start.
  // (Blank lines before a request line are skipped while the server waits for one: start with a byte.)
  fc
    .string({ unit: 'binary-ascii', maxLength: 200 })
    .map((t): RawRequestSpec => ({ endpoint: 'malformed HTTP', raw: `~${t}\r\n\r\n`, responses: 1 })),
  fc
    .tuple(
      fc.constantFrom(
        'GET /healthz HTTP/1.1\r\n',
        'POST /api/v1/tasks HTTP/1.1\r\nHost: x\r\n',
        'GET /api/v1/tasks/{ID}/stream HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {A}\r\n',
      ),
      fc.string({ unit: 'binary-ascii', maxLength: 100 }),
    )
    .map(([start, t]): RawRequestSpec => ({ endpoint: 'malformed HTTP', raw: `${start}${t}\r\n\r\n`, responses: 1 })),
);

/**
 * Every endpoint by its weight, unknown routes and methods, and bytes that are not HTTP. Their
 * defects are mixed, so what the contract fixes for each is only the shape of its answer; the
 * requests with one answer fixed are in oracle-requests.ts.
 */
export const hostileRequest: fc.Arbitrary<FuzzRequest> = fc.oneof(
  ...ENDPOINT_SHAPES.map((shape) => ({ weight: shape.weight, arbitrary: endpointRequest(shape) as fc.Arbitrary<FuzzRequest> })),
  { weight: 6, arbitrary: malformed },
);

// ---------------------------------------------------------------------------------------------
// To bytes

/** What the suite knows when a request is sent: the keys and the pools of real ids. */
export interface Pools {
  readonly keys: { readonly A: string; readonly B: string };
  task(tenant: 'A' | 'B', pick: number): string | undefined;
  pending(pick: number): { readonly taskId: string; readonly callId: string } | undefined;
  artifact(pick: number): { readonly taskId: string; readonly path: string } | undefined;
  delivery(pick: number): { readonly taskId: string; readonly deliveryId: string } | undefined;
}

export interface WireRequest {
  readonly chunks: Buffer[];
  /** Request line as sent (cut), for messages. */
  readonly line: string;
  readonly method: string;
  /** The request target up to `?`, decoded only as far as the route check needs. */
  readonly pathname: string;
  /** Which tenant owns the task the path names, when it names a real one. */
  readonly owner?: 'A' | 'B';
  readonly grants: AuthSpec['grants'];
  readonly responses: number;
  readonly heads: readonly boolean[];
  /** The request's expectation, dropped when a real id it names was not in the pools. */
  readonly expected?: Expectation;
}

const NOT_A_TASK = 'task_00000000000000000000000000000000';
const WRITE_PIECE = 64 * 1024;

export function toWire(request: FuzzRequest, pools: Pools): WireRequest {
  const fill = (text: string) => text.replaceAll('{A}', pools.keys.A).replaceAll('{B}', pools.keys.B);
  if ('raw' in request) {
    const raw = fill(expand(request.raw)).replaceAll('{ID}', pools.task('A', 0) ?? NOT_A_TASK);
    const bytes = Buffer.from(raw, 'latin1');
    const requestLine = raw.split(/\r?\n/)[0];
    // Words split on any run of spaces: the server may read `GET  /healthz` as GET /healthz.
    const [method = '', target = ''] = requestLine.split(/ +/);
    return {
      chunks: [bytes],
      line: requestLine.slice(0, 120),
      method,
      pathname: target.split('?')[0],
      grants: 'unknown',
      responses: request.responses,
      heads: request.heads ?? [],
    };
  }

  let owner: 'A' | 'B' | undefined;
  let pendingPick: { taskId: string; callId: string } | undefined;
  let artifactPick: { taskId: string; path: string } | undefined;
  let deliveryPick: { taskId: string; deliveryId: string } | undefined;
  /** A real id the request names was not in its pool: what the contract answers is no longer known. */
  let missing = false;
  const real = <T>(value: T | undefined): T | undefined => ((missing ||= value === undefined), value);
  const idText = (ref: IdRef): string => {
    if ('text' in ref) return expand(ref.text);
    if ('pendingTask' in ref) pendingPick = pools.pending(ref.pendingTask);
    if ('artifactTask' in ref) artifactPick = pools.artifact(ref.artifactTask);
    if ('deliveryTask' in ref) deliveryPick = pools.delivery(ref.deliveryTask);
    const [tenant, id] =
      'own' in ref
        ? (['A', pools.task('A', ref.own)] as const)
        : 'other' in ref
          ? (['B', pools.task('B', ref.other)] as const)
          : 'pendingTask' in ref
            ? (['A', pendingPick?.taskId] as const)
            : 'deliveryTask' in ref
              ? (['A', deliveryPick?.taskId] as const)
              : (['A', artifactPick?.taskId] as const);
    if (real(id) === undefined) return NOT_A_TASK;
    owner = tenant;
    return id!;
  };
  const callText = (ref: CallRef): string =>
    'text' in ref
      ? expand(ref.text)
      : 'delivery' in ref
        ? (real(deliveryPick?.deliveryId) ?? 'wh_unknown')
        : (real(pendingPick?.callId) ?? 'call_unknown');
  const segment = (s: Segment): string => (typeof s === 'string' ? s : 'id' in s ? idText(s.id) : callText(s.call));
  const pathname = `/${request.path.map(segment).join('/')}`;
  // An artifact path in the query is the one the path's task was picked by, when it was; else any.
  const queryValue = (v: QueryValue): string =>
    typeof v === 'object' && !Array.isArray(v) && 'artifactPath' in v
      ? percentEncode(real(artifactPick ?? pools.artifact(v.artifactPath))?.path ?? 'downloads/none.md')
      : expand(v as Text);
  const query = request.query?.map(([k, v]) => `${expand(k)}=${queryValue(v)}`).join('&');
  const target = query === undefined ? pathname : `${pathname}?${query}`;

  let body: Buffer | undefined;
  if (request.body && 'json' in request.body) {
    const utf8 = serializeJson(request.body.json);
    body = request.body.encoding === 'utf8' ? utf8 : Buffer.from(utf8.toString('utf8'), request.body.encoding);
  } else if (request.body && 'multipart' in request.body) body = serializeMultipart(request.body.multipart);
  else if (request.body) body = Buffer.from(expand(request.body.raw), 'latin1');

  const lines = [`${request.method} ${target} ${request.version}`, 'Host: 127.0.0.1'];
  for (const value of request.auth.values) lines.push(`Authorization: ${fill(expand(value))}`);
  if (request.contentType !== undefined) lines.push(`Content-Type: ${expand(request.contentType)}`);
  // A Content-Length or chunked Transfer-Encoding of its own on a request sent without a body
  // would leave the server rightly waiting for one: those go only where they clash with ours.
  const framed = body !== undefined || request.framing.kind === 'chunked';
  const announcesBody = (name: string, value: string) => /^(content-length: *[1-9]|transfer-encoding: *chunked)/i.test(`${name}: ${value}`);
  for (const [name, value] of request.headers)
    if (framed || !announcesBody(expand(name), expand(value))) lines.push(`${expand(name)}: ${expand(value)}`);
  if (request.close) lines.push('Connection: close');

  const framing = request.framing;
  let payload: Buffer[] = [];
  let responses = 1;
  if (framing.kind === 'chunked') {
    lines.push('Transfer-Encoding: chunked');
    const data = body ?? Buffer.alloc(0);
    for (let offset = 0, i = 0; offset < data.length; i++) {
      const size = framing.sizes[i % framing.sizes.length];
      const piece = data.subarray(offset, offset + size);
      payload.push(
        Buffer.from(`${piece.length.toString(16)}${framing.extension ? ';ext="v"' : ''}\r\n`, 'latin1'),
        piece,
        Buffer.from('\r\n'),
      );
      offset += size;
    }
    payload.push(Buffer.from(framing.trailer ? '0\r\nX-Trailer: t\r\n\r\n' : '0\r\n\r\n'));
  } else if (framing.kind === 'declared-huge') {
    lines.push('Content-Length: 900000000');
    payload = [(body ?? Buffer.alloc(0)).subarray(0, 1_000)];
  } else if (body !== undefined) {
    const declared = framing.kind === 'short-length' ? Math.max(0, body.length - framing.by) : body.length;
    lines.push(`Content-Length: ${declared}`);
    payload = [body];
    // What is left over reaches the server as the start of a next request.
    if (declared < body.length) responses = 2;
  }
  const head = Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1');
  const all = Buffer.concat([head, ...payload]);
  const chunks: Buffer[] = [];
  for (let offset = 0; offset < all.length; offset += WRITE_PIECE) chunks.push(all.subarray(offset, offset + WRITE_PIECE));
  return {
    chunks,
    line: `${request.method} ${target}`.slice(0, 120),
    method: request.method,
    pathname,
    owner,
    grants: request.auth.grants,
    responses,
    heads: [request.method === 'HEAD'],
    expected: missing ? undefined : request.expected,
  };
}
