import type { IncomingMessage } from 'node:http';
import type { Transform } from 'node:stream';
import { pipeline, Readable } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate, createInflateRaw } from 'node:zlib';
import { ToolFailure } from '../tool.errors';

export interface BodyPrefix {
  readonly bytes: Buffer;
  /** The body went on past `maxBytes`; the rest was never read. */
  readonly truncated: boolean;
}

const DECODERS = new Map<string, () => Transform>([
  ['gzip', createGunzip],
  ['x-gzip', createGunzip],
  ['br', createBrotliDecompress],
]);

/**
 * Reads at most `maxBytes` of the decoded body, then destroys the response. The bound applies
 * after decompression, and decompression only runs as fast as this loop pulls, so a small
 * compressed body that inflates to gigabytes costs no more than `maxBytes`.
 */
export async function readBoundedBody(response: IncomingMessage, maxBytes: number): Promise<BodyPrefix> {
  const chunks: Buffer[] = [];
  let size = 0;
  let truncated = false;
  try {
    for await (const chunk of decoded(response)) {
      const room = maxBytes - size;
      if (chunk.length > room) {
        chunks.push(chunk.subarray(0, room));
        size += room;
        truncated = true;
        break;
      }
      chunks.push(chunk);
      size += chunk.length;
    }
  } catch (error) {
    if (error instanceof ToolFailure) throw error;
    throw new ToolFailure(`the page broke off while its body was read: ${(error as Error).message}`);
  } finally {
    response.destroy();
  }
  return { bytes: Buffer.concat(chunks, size), truncated };
}

function decoded(response: IncomingMessage): AsyncIterable<Buffer> {
  const encoding = (response.headers['content-encoding'] ?? '').trim().toLowerCase();
  if (encoding === '' || encoding === 'identity') return response;
  if (encoding === 'deflate') return inflated(response);
  const createDecoder = DECODERS.get(encoding);
  if (!createDecoder) throw new ToolFailure(`the page is sent with content encoding "${encoding}", which web_fetch cannot decode`);
  // pipeline passes a failure of either stream to the other, so the loop above sees it.
  return pipeline(response, createDecoder(), () => undefined);
}

/**
 * `deflate` is meant to be zlib-wrapped (RFC 9110), but some servers send the raw stream: the
 * first two bytes tell them apart (a zlib header names method 8 and is a multiple of 31).
 */
async function* inflated(response: IncomingMessage): AsyncIterable<Buffer> {
  const chunks = response[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  let head = Buffer.alloc(0);
  while (head.length < 2) {
    const next = await chunks.next();
    if (next.done) break;
    head = Buffer.concat([head, next.value]);
  }
  if (head.length === 0) return;
  const zlibWrapped = head.length >= 2 && (head[0] & 0x0f) === 8 && ((head[0] << 8) | head[1]) % 31 === 0;
  const body = Readable.from(
    (async function* () {
      yield head;
      for (let next = await chunks.next(); !next.done; next = await chunks.next()) yield next.value;
    })(),
  );
  yield* pipeline(body, zlibWrapped ? createInflate() : createInflateRaw(), () => undefined);
}
