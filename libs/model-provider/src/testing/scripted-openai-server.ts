import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TokenUsage } from '../model-provider.port';

// A real HTTP server speaking OpenAI chat-completions, so tests and benchmarks script the model
// at the network boundary and the real adapter (SSE parsing, retries, timeouts) is exercised.

export interface ScriptedToolCall {
  readonly name: string;
  /** An object is sent as JSON; a string is sent verbatim (to script broken or empty JSON). */
  readonly arguments: Record<string, unknown> | string;
  readonly id?: string;
}

export interface ScriptedCompletion {
  readonly text?: string;
  readonly toolCalls?: readonly ScriptedToolCall[];
  /** Default: a rough estimate (characters / 4); `null` leaves usage out of the response. */
  readonly usage?: Partial<TokenUsage> | null;
  readonly finishReason?: string;
  readonly delayMs?: number;
  /** The model the answer names (a dated id, say); default: the request's. */
  readonly model?: string;
}

export interface ScriptedError {
  readonly status: number;
  /** Default: an OpenAI-style `{error: {message}}`. */
  readonly body?: unknown;
  /** Sent as the `Retry-After` header, in seconds. */
  readonly retryAfter?: number;
  readonly delayMs?: number;
}

/** Accepts the request and never answers, for timeout and abort tests. */
export interface ScriptedHang {
  readonly hang: true;
}

export type ScriptedReply =
  ScriptedCompletion | ScriptedError | ScriptedHang | ((requestBody: ChatCompletionsBody) => ScriptedReply | Promise<ScriptedReply>);

/** What the server received, loosely typed: tests assert on the exact wire shape. */
export interface ChatCompletionsBody {
  readonly model?: string;
  readonly messages?: Array<Record<string, any>>;
  readonly tools?: Array<Record<string, any>>;
  readonly stream?: boolean;
  readonly stream_options?: { include_usage?: boolean };
  readonly [field: string]: unknown;
}

export interface ScriptedOpenAiServer {
  /** Base URL ending in `/v1`, as LLM_BASE_URL expects. */
  readonly url: string;
  /** Bodies of the chat-completions requests received, in order. */
  readonly requests: ChatCompletionsBody[];
  /** Their headers, same order as `requests`. */
  readonly headers: IncomingHttpHeaders[];
  /** Milliseconds each answered chat-completions request spent in this server (arrival → reply written), in order of completion. */
  readonly timings: number[];
  /** Queues replies; each request takes the next one, then `defaultReply` once they run out. */
  script(...replies: ScriptedReply[]): void;
  /**
   * Drops the queued replies no request has taken; how many there were. A test that failed
   * half-way leaves its unused replies behind, which the next test's requests would take instead
   * of their own: calling this between tests keeps each test's script its own.
   */
  clear(): number;
  close(): Promise<void>;
}

export interface ScriptedOpenAiServerOptions {
  /** Default: `{ text: 'ok' }`. */
  readonly defaultReply?: ScriptedReply;
}

export async function startScriptedOpenAiServer(options: ScriptedOpenAiServerOptions = {}): Promise<ScriptedOpenAiServer> {
  const queue: ScriptedReply[] = [];
  const requests: ChatCompletionsBody[] = [];
  const headers: IncomingHttpHeaders[] = [];
  const timings: number[] = [];
  const defaultReply = options.defaultReply ?? { text: 'ok' };

  const server = createServer((req, res) => {
    const arrivedAt = performance.now();
    res.once('finish', () => {
      if (req.url?.endsWith('/v1/chat/completions')) timings.push(performance.now() - arrivedAt);
    });
    void handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) sendJson(res, 500, { error: { message: `scripted server: ${String(error)}` } });
      else res.destroy();
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const raw = await readBody(req);
    if (req.method !== 'POST' || !req.url?.endsWith('/v1/chat/completions')) {
      return sendJson(res, 404, { error: { message: `no route for ${req.method} ${req.url}` } });
    }
    let body: ChatCompletionsBody;
    try {
      body = JSON.parse(raw) as ChatCompletionsBody;
    } catch {
      return sendJson(res, 400, { error: { message: 'request body is not JSON' } });
    }
    requests.push(body);
    headers.push(req.headers);
    // Taken at arrival, so concurrent requests get distinct replies in arrival order.
    let reply = queue.shift() ?? defaultReply;
    while (typeof reply === 'function') reply = await reply(body);
    if ('hang' in reply) return; // the socket stays open until the client gives up or close()
    if (reply.delayMs) await delay(reply.delayMs);
    if (res.destroyed) return;
    if ('status' in reply) return sendError(res, reply);
    return body.stream ? sendStream(res, body, reply) : sendJson(res, 200, completionBody(body, reply));
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    headers,
    timings,
    script: (...replies) => void queue.push(...replies),
    clear: () => queue.splice(0).length,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        // Hanging replies keep sockets open; close() would wait for them forever.
        server.closeAllConnections();
      }),
  };
}

function sendError(res: ServerResponse, reply: ScriptedError): void {
  if (reply.retryAfter !== undefined) res.setHeader('retry-after', String(reply.retryAfter));
  sendJson(res, reply.status, reply.body ?? { error: { message: `scripted error ${reply.status}`, type: 'scripted' } });
}

function completionBody(request: ChatCompletionsBody, reply: ScriptedCompletion): Record<string, unknown> {
  const toolCalls = reply.toolCalls ?? [];
  return {
    id: 'chatcmpl-scripted',
    object: 'chat.completion',
    model: reply.model ?? request.model,
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: reply.text ?? (toolCalls.length ? null : ''),
          ...(toolCalls.length ? { tool_calls: toolCalls.map((call, i) => wireToolCall(call, i)) } : {}),
        },
        finish_reason: finishReason(reply),
      },
    ],
    ...(reply.usage === null ? {} : { usage: wireUsage(request, reply) }),
  };
}

/** Splits text and each call's arguments into several deltas, as real servers do. */
async function sendStream(res: ServerResponse, request: ChatCompletionsBody, reply: ScriptedCompletion): Promise<void> {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const chunk = (choices: unknown[], extra: Record<string, unknown> = {}) => ({
    id: 'chatcmpl-scripted',
    object: 'chat.completion.chunk',
    model: reply.model ?? request.model,
    choices,
    ...extra,
  });
  const delta = (d: Record<string, unknown>, finish: string | null = null) => [{ index: 0, delta: d, finish_reason: finish }];
  const events: unknown[] = [chunk(delta({ role: 'assistant', content: '' }))];
  for (const piece of split(reply.text ?? '', 3)) events.push(chunk(delta({ content: piece })));
  (reply.toolCalls ?? []).forEach((call, index) => {
    const wire = wireToolCall(call, index);
    events.push(
      chunk(delta({ tool_calls: [{ index, id: wire.id, type: 'function', function: { name: wire.function.name, arguments: '' } }] })),
    );
    for (const piece of split(wire.function.arguments, 3)) {
      events.push(chunk(delta({ tool_calls: [{ index, function: { arguments: piece } }] })));
    }
  });
  events.push(chunk(delta({}, finishReason(reply))));
  if (request.stream_options?.include_usage && reply.usage !== null) {
    events.push(chunk([], { usage: wireUsage(request, reply) }));
  }
  for (const event of events) {
    const text = `data: ${JSON.stringify(event)}\n\n`;
    // Each event goes out in two writes so the client must reassemble lines split mid-way.
    const half = Math.floor(text.length / 2);
    if (!(await write(res, text.slice(0, half))) || !(await write(res, text.slice(half)))) return;
  }
  if (await write(res, 'data: [DONE]\n\n')) res.end();
}

function wireToolCall(call: ScriptedToolCall, index: number) {
  return {
    id: call.id ?? `call_scripted_${index}`,
    type: 'function' as const,
    function: {
      name: call.name,
      arguments: typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments),
    },
  };
}

function wireUsage(request: ChatCompletionsBody, reply: ScriptedCompletion) {
  const estimateOut = Math.ceil(((reply.text ?? '').length + JSON.stringify(reply.toolCalls ?? []).length) / 4);
  const prompt = reply.usage?.inputTokens ?? Math.ceil(JSON.stringify(request.messages ?? []).length / 4);
  const completion = reply.usage?.outputTokens ?? estimateOut;
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: reply.usage?.totalTokens ?? prompt + completion,
    // As OpenAI reports its automatic prompt caching: a part of prompt_tokens.
    ...(reply.usage?.cacheReadTokens ? { prompt_tokens_details: { cached_tokens: reply.usage.cacheReadTokens } } : {}),
  };
}

function finishReason(reply: ScriptedCompletion): string {
  return reply.finishReason ?? (reply.toolCalls?.length ? 'tool_calls' : 'stop');
}

/** Up to `parts` non-empty pieces; an empty string gives none. */
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

/** Writes and yields to the event loop so pieces leave as separate network chunks; false once the client left. */
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
