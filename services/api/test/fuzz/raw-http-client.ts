import { connect } from 'node:net';

/** One final HTTP response read off the wire (1xx interim responses are skipped). */
export interface RawResponse {
  readonly status: number;
  /** Lower-cased names; repeated headers joined with ", ". */
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Buffer;
  /** An SSE response: its body is whatever arrived before we hung up. */
  readonly sse: boolean;
}

export interface RawExchange {
  readonly responses: readonly RawResponse[];
  /** The server ended or reset the connection before we hung up. */
  readonly closedByServer: boolean;
  /** No complete response within the time limit, and the connection still open: a hang. */
  readonly timedOut: boolean;
  /** Bytes received that did not make a whole response (a cut-off answer). */
  readonly leftover: number;
  readonly socketError?: string;
}

export interface ExchangeOptions {
  /** How long to wait for the responses before calling it a hang. */
  readonly timeoutMs: number;
  /** Responses expected (pipelined requests, or a body the server will read as a second request). */
  readonly expectedResponses: number;
  /** After the expected responses, how long to wait for more (or for the server to close). */
  readonly lingerMs: number;
  /** How long to read an SSE body before hanging up (a stream of a running task never ends by itself). */
  readonly sseReadMs: number;
  /** Per response, in order: was its request a HEAD (a response without a body)? */
  readonly headRequests: readonly boolean[];
  /** Pause between writes of `chunks`, to split the request across TCP reads. */
  readonly writeGapMs?: number;
}

/**
 * Writes `chunks` to a fresh TCP connection exactly as given (nothing tidies a hostile request
 * up) and reads the responses with a small HTTP/1.1 response parser: Content-Length, chunked,
 * or until the server closes. Never rejects: what happened is in the result.
 */
export function rawExchange(host: string, port: number, chunks: readonly Buffer[], options: ExchangeOptions): Promise<RawExchange> {
  return new Promise((resolve) => {
    const socket = connect(port, host);
    const responses: RawResponse[] = [];
    let buffer: Buffer = Buffer.alloc(0);
    let closedByServer = false;
    let socketError: string | undefined;
    let settled = false;
    let lingerTimer: NodeJS.Timeout | undefined;
    let sseTimer: NodeJS.Timeout | undefined;
    let sseStart: { status: number; headers: Record<string, string>; bodyStart: number } | undefined;

    const finish = (timedOut: boolean) => {
      if (settled) return;
      settled = true;
      clearTimeout(hangTimer);
      clearTimeout(lingerTimer);
      clearTimeout(sseTimer);
      socket.destroy();
      if (sseStart) {
        const raw = buffer.subarray(sseStart.bodyStart);
        const body = /chunked/i.test(sseStart.headers['transfer-encoding'] ?? '') ? decodeChunks(raw).body : raw;
        responses.push({ status: sseStart.status, headers: sseStart.headers, body, sse: true });
      } else if (closedByServer) takeBodyUntilClose();
      resolve({ responses, closedByServer, timedOut, leftover: sseStart ? 0 : buffer.length, socketError });
    };
    const hangTimer = setTimeout(() => finish(true), options.timeoutMs);

    /** A response without a length ends when the connection does. */
    const takeBodyUntilClose = () => {
      const head = parseHead(buffer);
      if (!head || head.framing.kind !== 'close') return;
      responses.push({ status: head.status, headers: head.headers, body: buffer.subarray(head.headLength), sse: false });
      buffer = Buffer.alloc(0);
    };

    const parseAvailable = () => {
      for (;;) {
        if (sseStart) return;
        const head = parseHead(buffer);
        if (!head) return;
        if (head.status >= 100 && head.status < 200) {
          buffer = buffer.subarray(head.headLength);
          continue;
        }
        const isHead = options.headRequests[responses.length] ?? false;
        const bodyless = isHead || head.status === 204 || head.status === 304;
        if (!bodyless && (head.headers['content-type'] ?? '').startsWith('text/event-stream')) {
          sseStart = { status: head.status, headers: head.headers, bodyStart: head.headLength };
          sseTimer = setTimeout(() => finish(false), options.sseReadMs);
          return;
        }
        let body: Buffer;
        let rest: Buffer;
        if (bodyless) {
          body = Buffer.alloc(0);
          rest = buffer.subarray(head.headLength);
        } else if (head.framing.kind === 'length') {
          if (buffer.length < head.headLength + head.framing.length) return;
          body = buffer.subarray(head.headLength, head.headLength + head.framing.length);
          rest = buffer.subarray(head.headLength + head.framing.length);
        } else if (head.framing.kind === 'chunked') {
          const decoded = decodeChunked(buffer.subarray(head.headLength));
          if (!decoded) return;
          body = decoded.body;
          rest = buffer.subarray(head.headLength + decoded.consumed);
        } else {
          return; // until close
        }
        responses.push({ status: head.status, headers: head.headers, body, sse: false });
        buffer = rest;
        if (responses.length >= options.expectedResponses && !lingerTimer) {
          lingerTimer = setTimeout(() => finish(false), options.lingerMs);
          if (options.lingerMs === 0) return finish(false);
        }
      }
    };

    socket.on('data', (data) => {
      buffer = Buffer.concat([buffer, data]);
      parseAvailable();
    });
    socket.on('end', () => {
      closedByServer = true;
      finish(false);
    });
    socket.on('error', (error: NodeJS.ErrnoException) => {
      socketError = error.code ?? error.message;
      // EPIPE: we were still writing a body the server had stopped reading; its answer may follow.
      if (error.code === 'EPIPE') return;
      closedByServer = true;
      finish(false);
    });
    socket.on('close', () => {
      closedByServer = true;
      finish(false);
    });

    // Each chunk once the previous one is flushed, and none once the server has begun to answer:
    // writing on into a connection it is closing would make it reset the connection, and a
    // reset can discard its answer before we read it (RFC 9112, 9.6).
    const gap = options.writeGapMs ?? 0;
    const writeFrom = (index: number) => {
      if (index >= chunks.length || settled || socket.destroyed || (index > 0 && buffer.length + responses.length > 0)) return;
      socket.write(chunks[index], () => (gap > 0 ? setTimeout(() => writeFrom(index + 1), gap) : writeFrom(index + 1)));
    };
    socket.once('connect', () => writeFrom(0));
  });
}

interface ParsedHead {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly headLength: number;
  readonly framing: { kind: 'length'; length: number } | { kind: 'chunked' } | { kind: 'close' };
}

function parseHead(buffer: Buffer): ParsedHead | undefined {
  const end = buffer.indexOf('\r\n\r\n');
  if (end === -1) return undefined;
  const [statusLine, ...lines] = buffer.subarray(0, end).toString('latin1').split('\r\n');
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1] ?? NaN);
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    headers[name] = name in headers ? `${headers[name]}, ${value}` : value;
  }
  const headLength = end + 4;
  if (/chunked/i.test(headers['transfer-encoding'] ?? '')) return { status, headers, headLength, framing: { kind: 'chunked' } };
  if (headers['content-length'] !== undefined)
    return { status, headers, headLength, framing: { kind: 'length', length: Number(headers['content-length']) } };
  return { status, headers, headLength, framing: { kind: 'close' } };
}

/** A whole chunked body, or undefined while it has not all arrived. */
function decodeChunked(data: Buffer): { body: Buffer; consumed: number } | undefined {
  const { body, consumed, ended } = decodeChunks(data);
  return ended ? { body, consumed } : undefined;
}

/** The chunks that have arrived whole; `ended` once the last chunk and its trailers have. */
function decodeChunks(data: Buffer): { body: Buffer; consumed: number; ended: boolean } {
  const parts: Buffer[] = [];
  let offset = 0;
  for (;;) {
    const partial = { body: Buffer.concat(parts), consumed: offset, ended: false };
    const lineEnd = data.indexOf('\r\n', offset);
    if (lineEnd === -1) return partial;
    const size = parseInt(data.subarray(offset, lineEnd).toString('latin1').split(';')[0], 16);
    if (Number.isNaN(size)) return partial;
    if (size === 0) {
      // Trailers, then a blank line.
      if (data.subarray(lineEnd, lineEnd + 4).toString('latin1') === '\r\n\r\n') return { ...partial, consumed: lineEnd + 4, ended: true };
      const end = data.indexOf('\r\n\r\n', lineEnd);
      return end === -1 ? partial : { ...partial, consumed: end + 4, ended: true };
    }
    if (data.length < lineEnd + 2 + size + 2) return partial;
    parts.push(data.subarray(lineEnd + 2, lineEnd + 2 + size));
    offset = lineEnd + 2 + size + 2;
  }
}
