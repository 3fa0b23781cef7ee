import { createWriteStream } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { FastifyRequest } from 'fastify';
import { PayloadTooLargeError, ValidationError } from '@app/common';
import { MAX_JSON_DEPTH } from '../../http/body-parsers';
import { exceedsJsonDepth, exceedsValueDepth } from '../../http/json-depth';

/** An uploaded file as received, on this process's disk until it is put into the object store. */
export interface StagedUpload {
  readonly name: string;
  readonly stagedPath: string;
}

export interface UploadLimits {
  readonly maxBytes: number;
  readonly maxFiles: number;
  /** Set where a request takes no files at all (a follow-up): a file part is then a 400 saying this. */
  readonly noFiles?: string;
}

export interface ParsedMultipart {
  readonly fields: Record<string, unknown>;
  readonly files: StagedUpload[];
}

const BOOLEAN_FIELDS = new Set(['autoExecute', 'showInHistory']);
const JSON_FIELDS = new Set(['secrets', 'env', 'mcpServers', 'network']);
const INTEGER_FIELDS = new Set(['maxTokens']);
const DECIMAL_FIELDS = new Set(['maxCostUsd']);

/**
 * Reads a multipart create request: text fields as the JSON form would carry them (booleans from
 * `true`/`false`, `secrets`/`env` from JSON text) and files streamed to the staging directory,
 * counting bytes as they arrive. On any error the staged files are removed: nothing half written.
 * A malformed body (no boundary, cut off inside a part) is a 400; one whose Content-Length is
 * over the limit a 413, before any of it is read.
 */
export async function parseMultipartCreate(request: FastifyRequest, stagingDir: string, limits: UploadLimits): Promise<ParsedMultipart> {
  const boundary = /;\s*boundary=(?:"([^"]*)"|([^;\s]*))/i.exec(request.headers['content-type'] ?? '');
  if (!boundary)
    throw new ValidationError('Content-Type multipart/form-data needs a boundary parameter (multipart/form-data; boundary=...)');
  // RFC 2046: 1 to 70 characters. busboy throws on one over ~250 (it was a 500).
  const boundaryLength = (boundary[1] ?? boundary[2]).length;
  if (boundaryLength < 1 || boundaryLength > 70)
    throw new ValidationError(`the multipart boundary must be 1 to 70 characters, not ${boundaryLength}`);
  // Refused before reading, as the JSON parser does: a body declared over the limit was read up
  // to it, and one that then stalled was never answered.
  const declared = Number(request.headers['content-length']);
  if (declared > limits.maxBytes)
    throw new PayloadTooLargeError(`request body of ${declared} bytes exceeds ${limits.maxBytes} bytes (UPLOAD_MAX_BYTES)`);
  const fields: Record<string, unknown> = {};
  const files: StagedUpload[] = [];
  let total = 0;
  let cutShort: string | undefined;
  try {
    for await (const part of request.parts()) {
      if (part.type === 'field') {
        // @fastify/multipart parses a part sent as application/json: its JSON value is the field's.
        fields[part.fieldname] =
          part.mimetype === 'application/json' ? jsonPartValue(part.fieldname, part.value) : fieldValue(part.fieldname, String(part.value));
        continue;
      }
      if (limits.noFiles !== undefined) throw new ValidationError(limits.noFiles);
      if (part.fieldname !== 'files') throw new ValidationError(`unexpected file field "${part.fieldname}": upload files as "files"`);
      if (files.length >= limits.maxFiles)
        throw new PayloadTooLargeError(`at most ${limits.maxFiles} files per request (UPLOAD_MAX_FILES)`);
      const name = safeFileName(part.filename);
      await mkdir(stagingDir, { recursive: true });
      // The body ended (or a limit was hit) while we awaited: @fastify/multipart destroyed the
      // file, and piping a destroyed stream never settles. The loop's next step tells which.
      if (part.file.destroyed) {
        cutShort = name;
        continue;
      }
      const stagedPath = join(stagingDir, `${files.length}-${name}`);
      const counter = new Transform({
        transform(chunk: Buffer, _enc, done) {
          total += chunk.length;
          if (total > limits.maxBytes) done(new PayloadTooLargeError(`request body exceeds ${limits.maxBytes} bytes (UPLOAD_MAX_BYTES)`));
          else done(null, chunk);
        },
      });
      await pipeline(part.file, counter, createWriteStream(stagedPath));
      if (part.file.truncated) throw new PayloadTooLargeError(`file "${name}" exceeds ${limits.maxBytes} bytes (UPLOAD_MAX_BYTES)`);
      files.push({ name, stagedPath });
    }
    if (cutShort) throw new ValidationError(`files: the multipart body ends inside file "${cutShort}"`);
  } catch (error) {
    await rm(stagingDir, { recursive: true, force: true });
    if (isFastifyLimitError(error))
      throw new PayloadTooLargeError(`request exceeds the upload limits (UPLOAD_MAX_BYTES, UPLOAD_MAX_FILES)`);
    if (isCutShort(error)) throw new ValidationError('the multipart body ends inside a part, before its closing boundary');
    if ((error as { code?: string }).code === 'FST_INVALID_JSON_FIELD_ERROR') {
      throw new ValidationError('a multipart field sent as Content-Type application/json is not valid JSON (or is over 1 MiB)');
    }
    throw error;
  }
  const duplicates = files.map((f) => f.name).filter((n, i, all) => all.indexOf(n) !== i);
  if (duplicates.length > 0) {
    await rm(stagingDir, { recursive: true, force: true });
    throw new ValidationError(`files: duplicate file name "${duplicates[0]}"`);
  }
  return { fields, files };
}

function fieldValue(name: string, raw: string): unknown {
  if (BOOLEAN_FIELDS.has(name)) {
    if (raw === 'true') return true;
    if (raw === 'false') return false;
    throw new ValidationError(`${name} must be the text true or false`);
  }
  if (INTEGER_FIELDS.has(name)) {
    // Digits only (no sign, exponent or fraction); the DTO then checks the range.
    if (!/^\d{1,16}$/.test(raw)) throw new ValidationError(`${name} must be a whole number in digits`);
    return Number(raw);
  }
  if (DECIMAL_FIELDS.has(name)) {
    // A plain decimal (no sign or exponent); the DTO then checks the range.
    if (!/^\d{1,10}(\.\d{1,12})?$/.test(raw)) throw new ValidationError(`${name} must be a number in digits, e.g. 2.5`);
    return Number(raw);
  }
  if (JSON_FIELDS.has(name)) {
    if (exceedsJsonDepth(raw, MAX_JSON_DEPTH)) throw new ValidationError(`${name} is nested deeper than ${MAX_JSON_DEPTH} levels`);
    try {
      return JSON.parse(raw);
    } catch {
      throw new ValidationError(`${name} must be a JSON-encoded object in multipart requests`);
    }
  }
  return raw;
}

/** A part sent as application/json, already parsed: the same fields, as JSON values. */
function jsonPartValue(name: string, value: unknown): unknown {
  if (BOOLEAN_FIELDS.has(name) && typeof value !== 'boolean') throw new ValidationError(`${name} must be true or false`);
  if (INTEGER_FIELDS.has(name) && !(Number.isSafeInteger(value) && (value as number) >= 0))
    throw new ValidationError(`${name} must be a whole number`);
  if (exceedsValueDepth(value, MAX_JSON_DEPTH)) throw new ValidationError(`${name} is nested deeper than ${MAX_JSON_DEPTH} levels`);
  return value;
}

/** The bare file name; anything path-like is refused rather than guessed at. */
function safeFileName(filename: string): string {
  const name = basename(filename ?? '');
  if (!name || name !== filename || name === '.' || name === '..' || name.includes('\0') || name.length > 255) {
    throw new ValidationError(`files: invalid file name "${filename}" (a bare name is required)`);
  }
  return name;
}

/** busboy's words for a body that ends inside a part; a stream destroyed under the pipe says the same. */
function isCutShort(error: unknown): boolean {
  if ((error as { code?: string }).code === 'ERR_STREAM_PREMATURE_CLOSE') return true;
  return error instanceof Error && /terminated early due to unexpected end of multipart data/.test(error.message);
}

function isFastifyLimitError(error: unknown): boolean {
  const code = (error as { code?: string }).code ?? '';
  return ['FST_REQ_FILE_TOO_LARGE', 'FST_FILES_LIMIT', 'FST_PARTS_LIMIT', 'FST_FIELDS_LIMIT'].includes(code);
}
