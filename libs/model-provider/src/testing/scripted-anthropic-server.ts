import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

// A real HTTP server speaking Anthropic's Messages API (POST /v1/messages), whole or streamed, in
// the shapes Anthropic documents, so tests script Claude at the network boundary and the real
// adapter (event parsing, retries, usage) is exercised, as scripted-openai-server.ts does for
// chat-completions.

export interface ScriptedToolUse {
  readonly name: string;
  readonly input: Record<string, unknown>;
  readonly id?: string;
}

export interface ScriptedUsage {
  readonly inputTokens?: number;
  readonly outputTokens?: number;
  readonly cacheReadTokens?: number;
  readonly cacheWriteTokens?: number;
}

export interface ScriptedMessage {
  readonly text?: string;
  readonly toolUses?: readonly ScriptedToolUse[];
  /** As Anthropic reports it: `input_tokens` then excludes the cache reads and writes. Default: estimates. */
  readonly usage?: ScriptedUsage;
  /** Default: `tool_use` when there are tool uses, else `end_turn`. */
  readonly stopReason?: string;
  /** Streamed answers only: an `error` event (e.g. overloaded_error) after message_start, instead of the message. */
  readonly streamError?: { readonly type: string; readonly message: string };
  readonly delayMs?: number;
}

export interface ScriptedAnthropicError {
  readonly status: number;
  /** Default: Anthropic's `{type: "error", error: {type, message}}`. */
  readonly body?: unknown;
  /** Sent as the `retry-after` header, in seconds. */
  readonly retryAfter?: number;
}

/** Accepts the request and never answers, for timeout and abort tests. */
export interface ScriptedAnthropicHang {
  readonly hang: true;
}

export type ScriptedAnthropicReply =
  | ScriptedMessage
  | ScriptedAnthropicError
  | ScriptedAnthropicHang
  | ((requestBody: MessagesBody) => ScriptedAnthropicReply | Promise<ScriptedAnthropicReply>);

/** What the server received, loosely typed: tests assert on the exact wire shape. */
export interface MessagesBody {
  readonly model?: string;
  readonly max_tokens?: number;
  readonly system?: Array<Record<string, any>> | string;
  readonly messages?: Array<Record<string, any>>;
  readonly tools?: Array<Record<string, any>>;
  readonly stream?: boolean;
  readonly [field: string]: unknown;
}

export interface ScriptedAnthropicServer {
  /** The origin, as LLM_BASE_URL expects for LLM_PROVIDER=anthropic. */
  readonly url: string;
  readonly requests: MessagesBody[];
  readonly headers: IncomingHttpHeaders[];
  script(...replies: ScriptedAnthropicReply[]): void;
  close(): Promise<void>;
}

const ERROR_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  500: 'api_error',
  529: 'overloaded_error',
};

export async function startScriptedAnthropicServer(
  options: { readonly defaultReply?: ScriptedAnthropicReply } = {},
): Promise<ScriptedAnthropicServer> {
  const queue: ScriptedAnthropicReply[] = [];
  const requests: MessagesBody[] = [];
  const headers: IncomingHttpHeaders[] = [];
  const defaultReply = options.defaultReply ?? { text: 'ok' };

  const server = createServer((req, res) => {
    void handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) sendError(res, { status: 500, body: errorBody(500, `scripted server: ${String(error)}`) });
      else res.destroy();
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const raw = await readBody(req);
    if (req.method !== 'POST' || req.url !== '/v1/messages') {
      return sendError(res, { status: 404, body: errorBody(404, `no route for ${req.method} ${req.url}`) });
    }
    if (!req.headers['x-api-key']) return sendError(res, { status: 401, body: errorBody(401, 'x-api-key header is required') });
    if (!req.headers['anthropic-version']) {
      return sendError(res, { status: 400, body: errorBody(400, 'anthropic-version header is required') });
    }
    let body: MessagesBody;
    try {
      body = JSON.parse(raw) as MessagesBody;
    } catch {
      return sendError(res, { status: 400, body: errorBody(400, 'request body is not JSON') });
    }
    if (typeof body.max_tokens !== 'number') return sendError(res, { status: 400, body: errorBody(400, 'max_tokens: Field required') });
    requests.push(body);
    headers.push(req.headers);
    let reply = queue.shift() ?? defaultReply;
    while (typeof reply === 'function') reply = await reply(body);
    if ('hang' in reply) return; // the socket stays open until the client gives up or close()
    if ('status' in reply) return sendError(res, reply);
    if (reply.delayMs) await delay(reply.delayMs);
    if (res.destroyed) return;
    return body.stream ? sendStream(res, body, reply) : sendJson(res, 200, messageBody(body, reply));
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    headers,
    script: (...replies) => void queue.push(...replies),
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}

function errorBody(status: number, message: string) {
  return { type: 'error', error: { type: ERROR_TYPES[status] ?? 'api_error', message } };
}

function sendError(res: ServerResponse, reply: ScriptedAnthropicError): void {
  if (reply.retryAfter !== undefined) res.setHeader('retry-after', String(reply.retryAfter));
  sendJson(res, reply.status, reply.body ?? errorBody(reply.status, `scripted error ${reply.status}`));
}

function blocks(reply: ScriptedMessage) {
  return [
    ...(reply.text ? [{ type: 'text' as const, text: reply.text }] : []),
    ...(reply.toolUses ?? []).map((use, i) => ({
      type: 'tool_use' as const,
      id: use.id ?? `toolu_scripted_${i}`,
      name: use.name,
      input: use.input,
    })),
  ];
}

function messageBody(request: MessagesBody, reply: ScriptedMessage) {
  return {
    id: 'msg_scripted',
    type: 'message',
    role: 'assistant',
    model: request.model,
    content: blocks(reply),
    stop_reason: stopReason(reply),
    stop_sequence: null,
    usage: wireUsage(request, reply),
  };
}

/** The documented event sequence; text and tool input arrive in several deltas, with a ping between. */
async function sendStream(res: ServerResponse, request: MessagesBody, reply: ScriptedMessage): Promise<void> {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const usage = wireUsage(request, reply);
  const events: Record<string, unknown>[] = [
    {
      type: 'message_start',
      message: { ...messageBody(request, reply), content: [], stop_reason: null, usage: { ...usage, output_tokens: 1 } },
    },
    { type: 'ping' },
  ];
  if (reply.streamError) {
    events.push({ type: 'error', error: reply.streamError });
  } else {
    blocks(reply).forEach((block, index) => {
      if (block.type === 'text') {
        events.push({ type: 'content_block_start', index, content_block: { type: 'text', text: '' } });
        for (const text of split(block.text!, 3)) events.push({ type: 'content_block_delta', index, delta: { type: 'text_delta', text } });
      } else {
        events.push({ type: 'content_block_start', index, content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} } });
        for (const partial_json of split(JSON.stringify(block.input), 3)) {
          events.push({ type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json } });
        }
      }
      events.push({ type: 'content_block_stop', index });
    });
    events.push({
      type: 'message_delta',
      delta: { stop_reason: stopReason(reply), stop_sequence: null },
      usage: { output_tokens: usage.output_tokens },
    });
    events.push({ type: 'message_stop' });
  }
  for (const event of events) {
    const text = `event: ${String(event.type)}\ndata: ${JSON.stringify(event)}\n\n`;
    // Each event goes out in two writes so the client must reassemble lines split mid-way.
    const half = Math.floor(text.length / 2);
    if (!(await write(res, text.slice(0, half))) || !(await write(res, text.slice(half)))) return;
  }
  res.end();
}

function wireUsage(request: MessagesBody, reply: ScriptedMessage) {
  return {
    input_tokens: reply.usage?.inputTokens ?? Math.ceil(JSON.stringify(request.messages ?? []).length / 4),
    cache_creation_input_tokens: reply.usage?.cacheWriteTokens ?? 0,
    cache_read_input_tokens: reply.usage?.cacheReadTokens ?? 0,
    output_tokens: reply.usage?.outputTokens ?? Math.ceil(((reply.text ?? '').length + JSON.stringify(reply.toolUses ?? []).length) / 4),
  };
}

function stopReason(reply: ScriptedMessage): string {
  return reply.stopReason ?? (reply.toolUses?.length ? 'tool_use' : 'end_turn');
}

function split(text: string, parts: number): string[] {
  const size = Math.max(1, Math.ceil(text.length / parts));
  const pieces: string[] = [];
  for (let i = 0; i < text.length; i += size) pieces.push(text.slice(i, i + size));
  return pieces;
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

async function write(res: ServerResponse, text: string): Promise<boolean> {
  if (res.destroyed) return false;
  res.write(text);
  await new Promise((resolve) => setImmediate(resolve));
  return !res.destroyed;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
