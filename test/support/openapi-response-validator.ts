import type { ErrorObject } from 'ajv';
import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseSseBlocks } from './sse-client';

const DOCUMENT_FILE = join(__dirname, '..', '..', 'docs', 'openapi.json');
const DOCUMENT_ID = 'openapi.json';
/** Keys of an OpenAPI document, and annotations of its schemas, that are not JSON Schema keywords. */
const OPENAPI_WORDS = ['openapi', 'info', 'servers', 'tags', 'paths', 'components', 'security', 'example', 'discriminator'];

type Json = Record<string, any>;

/** An answer as the client received it. */
export interface ObservedAnswer {
  readonly status: number;
  /** Header names in any case. */
  readonly headers: Headers | Record<string, string>;
  readonly body: Buffer;
}

/**
 * Checks answers of the running service against docs/openapi.json: the status is documented for
 * the operation, the body matches the schema of its content type (each event of a stream, the
 * bytes of a download), the documented headers are there. Records each (operationId, status)
 * checked, so a suite can prove it exercised every answer the document promises.
 */
export class OpenApiResponseValidator {
  private readonly document: Json;
  private readonly ajv: Ajv;
  private readonly covered = new Set<string>();

  constructor(document: Json = JSON.parse(readFileSync(DOCUMENT_FILE, 'utf8'))) {
    this.document = document;
    // Strict: a keyword Ajv does not know fails the compile instead of being skipped. OpenAPI's
    // own words are declared. `discriminator` is one of them (Ajv's own refuses `mapping`): the
    // oneOf it sits on does the checking, and schemaProblems reads its mapping for the errors.
    this.ajv = new Ajv({ allErrors: true, strict: true });
    addFormats(this.ajv);
    this.ajv.addVocabulary(OPENAPI_WORDS);
    this.ajv.addSchema(document, DOCUMENT_ID);
  }

  /** Every (operationId, status) pair the document lists, as "operationId status", sorted. */
  documentedPairs(): string[] {
    return this.operations()
      .flatMap(({ operation }) => Object.keys(operation.responses).map((status) => `${operation.operationId} ${status}`))
      .sort();
  }

  /** The pairs `check` has passed so far, sorted. */
  coveredPairs(): string[] {
    return [...this.covered].sort();
  }

  /**
   * Throws, with every difference found, unless `answer` has `status` and matches what the
   * document says `method pathTemplate` answers with it.
   */
  check(method: string, pathTemplate: string, status: number, answer: ObservedAnswer): void {
    const where = `${method.toUpperCase()} ${pathTemplate} ${status}`;
    const operation = this.document.paths[pathTemplate]?.[method.toLowerCase()] as Json | undefined;
    if (!operation) throw new Error(`${where}: the document has no such operation`);
    if (answer.status !== status) {
      throw new Error(`${where}: answered ${answer.status} instead: ${answer.body.toString('utf8').slice(0, 300)}`);
    }
    const documented = operation.responses[String(status)] as Json | undefined;
    if (!documented) {
      throw new Error(
        `${where}: status not documented for ${operation.operationId} (documented: ${Object.keys(operation.responses).join(', ')})`,
      );
    }
    const { pointer, response } = this.resolveResponse(
      documented,
      `/paths/${escape(pathTemplate)}/${method.toLowerCase()}/responses/${status}`,
    );
    const problems = [...this.headerProblems(pointer, response, answer), ...this.bodyProblems(pointer, response, answer)];
    if (problems.length > 0)
      throw new Error(`${where} (${operation.operationId}) does not match docs/openapi.json:\n  ${problems.join('\n  ')}`);
    this.covered.add(`${operation.operationId} ${status}`);
  }

  /** Every operation of the document: its method (upper case), path template and operation. */
  operations(): { method: string; path: string; operation: Json }[] {
    return Object.entries(this.document.paths as Json).flatMap(([path, item]) =>
      Object.entries(item as Json)
        .filter(([, operation]) => typeof operation === 'object' && operation !== null && 'responses' in operation)
        .map(([method, operation]) => ({ method: method.toUpperCase(), path, operation: operation as Json })),
    );
  }

  /** A response object, following its `$ref` to components.responses, and the JSON pointer to it. */
  private resolveResponse(response: Json, pointer: string): { pointer: string; response: Json } {
    const ref = response.$ref as string | undefined;
    return ref === undefined ? { pointer, response } : this.resolveResponse(this.nodeAt(ref.slice(1)), ref.slice(1));
  }

  /** The document's node at a JSON pointer (`/components/schemas/Task`). */
  private nodeAt(pointer: string): Json {
    const node = pointer
      .split('/')
      .slice(1)
      .reduce<Json | undefined>((parent, key) => parent?.[unescape(key)], this.document);
    if (node === undefined) throw new Error(`docs/openapi.json has nothing at ${pointer}`);
    return node;
  }

  private headerProblems(pointer: string, response: Json, answer: ObservedAnswer): string[] {
    return Object.entries((response.headers ?? {}) as Json).flatMap(([name, header]) => {
      const value = headerOf(answer, name);
      if (value === undefined) return [`header ${name}: missing`];
      const schema = (header as Json).schema as Json | undefined;
      if (!schema) return [];
      // A header is text; a documented number is compared as the number it spells.
      const typed = ['integer', 'number'].includes(schema.type) && /^-?\d+(\.\d+)?$/.test(value) ? Number(value) : value;
      return this.schemaProblems(`${pointer}/headers/${escape(name)}/schema`, typed, `header ${name}`);
    });
  }

  private bodyProblems(pointer: string, response: Json, answer: ObservedAnswer): string[] {
    const content = (response.content ?? {}) as Json;
    const types = Object.keys(content);
    if (types.length === 0) return answer.body.length === 0 ? [] : [`a body, where the document lists none`];
    const mediaType = (headerOf(answer, 'content-type') ?? '').split(';')[0].trim().toLowerCase();
    const schemaAt = (type: string) => `${pointer}/content/${escape(type)}/schema`;
    if (mediaType === 'application/json' && content['application/json']) {
      const text = answer.body.toString('utf8');
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch {
        return [`body: not JSON: ${text.slice(0, 200)}`];
      }
      return this.schemaProblems(schemaAt('application/json'), value, 'body');
    }
    // Text (the Prometheus exposition): checked against its schema as the string it is.
    if (mediaType === 'text/plain' && content['text/plain'])
      return this.schemaProblems(schemaAt('text/plain'), answer.body.toString('utf8'), 'body');
    if (mediaType === 'text/event-stream' && content['text/event-stream'])
      return this.streamProblems(schemaAt('text/event-stream'), answer);
    // A download's bytes are whatever the file holds, under the Content-Type of its extension.
    const binary = types.find((type) => content[type].schema?.type === 'string' && content[type].schema?.format === 'binary');
    if (binary) return this.lengthProblems(answer);
    return [`Content-Type ${mediaType || '(none)'}: the document lists ${types.join(', ')}`];
  }

  /** Every event block of a stream: `event:` its type, an `id:`, and `data:` a valid event. */
  private streamProblems(schema: string, answer: ObservedAnswer): string[] {
    const blocks = parseSseBlocks(answer.body.toString('utf8')).filter((block) => block.comment === undefined);
    if (blocks.length === 0) return ['stream: no events'];
    return blocks.flatMap((block, i) => {
      const at = `event ${i + 1} (id ${block.id ?? '?'})`;
      if (block.data === undefined) return [`${at}: no data line`];
      let event: Json;
      try {
        event = JSON.parse(block.data);
      } catch {
        return [`${at}: data is not JSON: ${block.data.slice(0, 200)}`];
      }
      return [
        ...(/^[1-9]\d*$/.test(block.id ?? '') ? [] : [`${at}: id "${block.id ?? ''}" is not an event id`]),
        ...(block.event === event.type ? [] : [`${at}: event "${block.event}" is not the data's type "${event.type}"`]),
        ...this.schemaProblems(schema, event, at),
      ];
    });
  }

  private lengthProblems(answer: ObservedAnswer): string[] {
    const declared = headerOf(answer, 'content-length');
    return declared === undefined || Number(declared) === answer.body.length
      ? []
      : [`body: ${answer.body.length} bytes, Content-Length says ${declared}`];
  }

  /**
   * What is wrong with `value` by the schema at `pointer`. Where the schema tells its variants
   * apart by a discriminator, the errors are those of the variant the value names, rather than
   * one set per variant of the oneOf.
   */
  private schemaProblems(pointer: string, value: unknown, what: string): string[] {
    const id = `${DOCUMENT_ID}#${pointer}`;
    const validate = this.ajv.getSchema(id) ?? this.ajv.compile({ $ref: id });
    if (validate(value)) return [];
    const schema = this.schemaAt(pointer);
    const { propertyName, mapping } = (schema.discriminator ?? {}) as { propertyName?: string; mapping?: Record<string, string> };
    if (propertyName && mapping && typeof value === 'object' && value !== null) {
      const variant = (value as Json)[propertyName];
      const ref = typeof variant === 'string' ? mapping[variant] : undefined;
      if (ref === undefined) return [`${what} /${propertyName}: ${JSON.stringify(variant)} is none of ${Object.keys(mapping).join(', ')}`];
      return this.schemaProblems(ref.slice(1), value, `${what} (${ref.split('/').at(-1)})`);
    }
    return (validate.errors ?? []).map((error) => `${what}${describe(error)}`);
  }

  /** The schema at a pointer, through its `$ref`s. */
  private schemaAt(pointer: string): Json {
    const node = this.nodeAt(pointer);
    return typeof node.$ref === 'string' ? this.schemaAt(node.$ref.slice(1)) : node;
  }
}

/** `/data/createdOn: must NOT have additional properties (createdOn)`-like lines. */
function describe(error: ErrorObject): string {
  const detail =
    error.keyword === 'additionalProperties'
      ? ` "${(error.params as { additionalProperty: string }).additionalProperty}"`
      : error.keyword === 'enum'
        ? ` ${JSON.stringify((error.params as { allowedValues: unknown[] }).allowedValues)}`
        : '';
  return ` ${error.instancePath || '(root)'}: ${error.message}${detail}`;
}

function headerOf(answer: ObservedAnswer, name: string): string | undefined {
  if (answer.headers instanceof Headers) return answer.headers.get(name) ?? undefined;
  const key = Object.keys(answer.headers).find((k) => k.toLowerCase() === name.toLowerCase());
  return key === undefined ? undefined : answer.headers[key];
}

/** JSON pointer escaping of one key (RFC 6901). */
const escape = (key: string): string => key.replaceAll('~', '~0').replaceAll('/', '~1');
const unescape = (key: string): string => key.replaceAll('~1', '/').replaceAll('~0', '~');
