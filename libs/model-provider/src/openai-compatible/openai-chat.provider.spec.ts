import type { RequestListener } from 'node:http';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describeModelProviderContract } from '@app/model-provider/testing/model-provider.contract';
import type { ScriptedOpenAiServer, ScriptedReply } from '@app/model-provider/testing/scripted-openai-server';
import { startScriptedOpenAiServer } from '@app/model-provider/testing/scripted-openai-server';
import { ModelCallAbortedError, ModelProviderError } from '../model-provider.errors';
import type { ChatMessage, ModelRequest, ToolDefinition } from '../model-provider.port';
import type { OpenAiChatProviderOptions } from './openai-chat.provider';
import { OpenAiChatProvider } from './openai-chat.provider';

// Every test talks to a real HTTP server on 127.0.0.1, so fetch, SSE framing, status codes and
// timeouts are the real ones.

let server: ScriptedOpenAiServer;
beforeEach(async () => {
  server = await startScriptedOpenAiServer();
});
afterEach(() => server.close());

function provider(options: Partial<OpenAiChatProviderOptions> = {}): OpenAiChatProvider {
  return new OpenAiChatProvider({ baseUrl: server.url, model: 'test-model', retryBaseDelayMs: 5, ...options });
}

const ask = (text: string, extra: Partial<ModelRequest> = {}): ModelRequest => ({
  messages: [{ role: 'user', content: text }],
  tools: [],
  ...extra,
});

const readFileTool: ToolDefinition = {
  name: 'read_file',
  description: 'Reads a file of the workspace',
  parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
};

describe('OpenAiChatProvider', () => {
  describe('text answers', () => {
    it('assembles a streamed answer from its deltas', async () => {
      server.script({ text: 'The quick brown fox jumps' });

      const response = await provider().complete(ask('hi'));

      expect(response).toMatchObject({
        text: 'The quick brown fox jumps',
        toolCalls: [],
        model: 'test-model',
        finishReason: 'stop',
        id: 'chatcmpl-scripted',
      });
      expect(server.requests[0]).toMatchObject({ model: 'test-model', stream: true, stream_options: { include_usage: true } });
    });

    it('reads a non-streaming answer from choices[0].message', async () => {
      server.script({ text: 'plain answer' });

      const response = await provider({ stream: false }).complete(ask('hi'));

      expect(response).toMatchObject({ text: 'plain answer', toolCalls: [], finishReason: 'stop', id: 'chatcmpl-scripted' });
      expect(server.requests[0].stream).toBeUndefined();
      expect(server.requests[0].stream_options).toBeUndefined();
    });
  });

  describe('tool calls', () => {
    const calls = [
      { id: 'call_a', name: 'read_file', arguments: { path: 'notes/todo.md' } },
      { id: 'call_b', name: 'shell', arguments: { command: 'ls -la && echo "done"', timeoutMs: 5000 } },
      { id: 'call_c', name: 'list_files', arguments: {} },
    ];

    it.each([true, false])('returns several tool calls of one response (stream: %s)', async (stream) => {
      server.script({ text: 'Let me look.', toolCalls: calls });

      const response = await provider({ stream }).complete(ask('look around', { tools: [readFileTool] }));

      expect(response.text).toBe('Let me look.');
      expect(response.toolCalls).toEqual(calls);
      expect(response.finishReason).toBe('tool_calls');
    });

    it('parses empty arguments as {} and keeps unparseable ones as _raw', async () => {
      server.script({
        toolCalls: [
          { id: 'c1', name: 'list_files', arguments: '' },
          { id: 'c2', name: 'read_file', arguments: '{"path": "a.txt"' },
        ],
      });

      const response = await provider().complete(ask('go'));

      expect(response.toolCalls).toEqual([
        { id: 'c1', name: 'list_files', arguments: {} },
        { id: 'c2', name: 'read_file', arguments: { _raw: '{"path": "a.txt"' } },
      ]);
    });
  });

  describe('request mapping', () => {
    it('sends the conversation with tool_calls, tool_call_id and the tools array', async () => {
      const messages: ChatMessage[] = [
        { role: 'system', content: 'You are an agent.' },
        { role: 'user', content: 'Read a.txt' },
        { role: 'assistant', content: null, toolCalls: [{ id: 'call_1', name: 'read_file', arguments: { path: 'a.txt' } }] },
        { role: 'tool', toolCallId: 'call_1', content: 'hello' },
        { role: 'assistant', content: 'It says hello.' },
      ];

      await provider().complete({ messages, tools: [readFileTool] });

      expect(server.requests[0].messages).toEqual([
        { role: 'system', content: 'You are an agent.' },
        { role: 'user', content: 'Read a.txt' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'read_file', arguments: '{"path":"a.txt"}' } }],
        },
        { role: 'tool', tool_call_id: 'call_1', content: 'hello' },
        { role: 'assistant', content: 'It says hello.' },
      ]);
      expect(server.requests[0].tools).toEqual([
        { type: 'function', function: { name: 'read_file', description: readFileTool.description, parameters: readFileTool.parameters } },
      ]);
    });

    it('leaves tools out when there are none', async () => {
      await provider().complete(ask('hi'));

      expect(server.requests[0]).not.toHaveProperty('tools');
    });

    it('round-trips tool calls it returned into the next request unchanged', async () => {
      server.script({ toolCalls: [{ id: 'call_x', name: 'shell', arguments: { command: 'pwd' } }] }, { text: 'done' });
      const model = provider();
      const first = await model.complete(ask('where am I?'));

      await model.complete({
        messages: [
          { role: 'user', content: 'where am I?' },
          { role: 'assistant', content: first.text || null, toolCalls: first.toolCalls },
          { role: 'tool', toolCallId: first.toolCalls[0].id, content: '/workspace' },
        ],
        tools: [],
      });

      expect(server.requests[1].messages?.slice(1)).toEqual([
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'call_x', type: 'function', function: { name: 'shell', arguments: '{"command":"pwd"}' } }],
        },
        { role: 'tool', tool_call_id: 'call_x', content: '/workspace' },
      ]);
    });
  });

  describe('usage', () => {
    it.each([true, false])('maps prompt/completion/total tokens (stream: %s)', async (stream) => {
      server.script({ text: 'hi', usage: { inputTokens: 12, outputTokens: 3, totalTokens: 15 } });

      const response = await provider({ stream }).complete(ask('hi'));

      expect(response.usage).toEqual({ inputTokens: 12, outputTokens: 3, totalTokens: 15, cacheReadTokens: 0, cacheWriteTokens: 0 });
    });

    it.each([true, false])('reports zero usage when the server sends none (stream: %s)', async (stream) => {
      server.script({ text: 'hi', usage: null });

      const response = await provider({ stream }).complete(ask('hi'));

      expect(response.usage).toEqual({ inputTokens: 0, outputTokens: 0, totalTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 });
    });
  });

  describe('retries', () => {
    it('retries a 429 after the Retry-After the server asked for', async () => {
      server.script({ status: 429, retryAfter: 1 }, { text: 'finally' });
      const started = Date.now();

      const response = await provider().complete(ask('hi'));

      expect(response.text).toBe('finally');
      expect(server.requests).toHaveLength(2);
      expect(Date.now() - started).toBeGreaterThanOrEqual(950);
    });

    it('caps a long Retry-After at maxRetryDelayMs', async () => {
      server.script({ status: 429, retryAfter: 3600 }, { text: 'soon' });

      const response = await provider({ maxRetryDelayMs: 20 }).complete(ask('hi'));

      expect(response.text).toBe('soon');
    });

    it('gives up after maxRetries + 1 attempts of 500, naming the status and the attempt count', async () => {
      server.script(...Array.from({ length: 3 }, () => ({ status: 500, body: { error: { message: 'upstream exploded' } } })));

      const error = await provider({ maxRetries: 2 })
        .complete(ask('hi'))
        .catch((e: unknown) => e);

      expect(error).toBeInstanceOf(ModelProviderError);
      expect(error).toMatchObject({ retryable: true, code: 'MODEL_PROVIDER.FAILED' });
      expect((error as Error).message).toMatch(/failed after 3 attempts; last error: HTTP 500 .*upstream exploded/);
      expect(server.requests).toHaveLength(3);
    });

    it('does not retry a 400 and passes on the provider message', async () => {
      server.script({ status: 400, body: { error: { message: "Invalid value for 'model'" } } });

      const error = await provider()
        .complete(ask('hi'))
        .catch((e: unknown) => e);

      expect(error).toBeInstanceOf(ModelProviderError);
      expect(error).toMatchObject({ retryable: false });
      expect((error as Error).message).toContain("HTTP 400 Bad Request: Invalid value for 'model'");
      expect(server.requests).toHaveLength(1);
    });

    it('retries an attempt that hangs past timeoutMs', async () => {
      server.script({ hang: true }, { text: 'second try' });

      const response = await provider({ timeoutMs: 200 }).complete(ask('hi'));

      expect(response.text).toBe('second try');
      expect(server.requests).toHaveLength(2);
    });

    it('names the timeout when every attempt hangs', async () => {
      server.script({ hang: true }, { hang: true });

      const error = await provider({ timeoutMs: 100, maxRetries: 1 })
        .complete(ask('hi'))
        .catch((e: unknown) => e);

      expect(error).toBeInstanceOf(ModelProviderError);
      expect((error as Error).message).toContain('failed after 2 attempts; last error: the attempt timed out after 100 ms');
    });

    it('retries network errors and names their cause', async () => {
      const closed = await unusedLocalUrl();

      const error = await provider({ baseUrl: closed, maxRetries: 1 })
        .complete(ask('hi'))
        .catch((e: unknown) => e);

      expect(error).toBeInstanceOf(ModelProviderError);
      expect((error as Error).message).toMatch(/failed after 2 attempts; last error: network error: .*ECONNREFUSED/);
    });

    it('retries a stream cut off before it finished', async () => {
      const cut = await startTruncatingServer();
      try {
        const error = await provider({ baseUrl: cut.url, maxRetries: 1 })
          .complete(ask('hi'))
          .catch((e: unknown) => e);

        expect((error as Error).message).toContain('failed after 2 attempts; last error: the stream ended before the completion finished');
        expect(cut.hits()).toBe(2);
      } finally {
        await cut.close();
      }
    });
  });

  describe('abort', () => {
    it('stops a hanging call at once when the signal fires, without retrying', async () => {
      server.script({ hang: true });
      const controller = new AbortController();
      setTimeout(() => controller.abort(), 50);
      const started = Date.now();

      const error = await provider()
        .complete(ask('hi', { signal: controller.signal }))
        .catch((e: unknown) => e);

      expect(error).toBeInstanceOf(ModelCallAbortedError);
      expect((error as Error).name).toBe('AbortError');
      expect(Date.now() - started).toBeLessThan(1000);
      expect(server.requests).toHaveLength(1);
    });

    it('stops while waiting to retry', async () => {
      server.script({ status: 503, retryAfter: 30 });
      const controller = new AbortController();
      setTimeout(() => controller.abort(), 100);

      const error = await provider()
        .complete(ask('hi', { signal: controller.signal }))
        .catch((e: unknown) => e);

      expect((error as Error).name).toBe('AbortError');
      expect(server.requests).toHaveLength(1);
    });

    it('sends nothing when the signal has already fired', async () => {
      const error = await provider()
        .complete(ask('hi', { signal: AbortSignal.abort() }))
        .catch((e: unknown) => e);

      expect((error as Error).name).toBe('AbortError');
      expect(server.requests).toHaveLength(0);
    });
  });

  describe('reading answers', () => {
    it('keeps its connections for the next calls after whole JSON answers', async () => {
      let calls = 0;
      const keep = await startServer((req, res) => {
        calls++;
        req.resume();
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({ choices: [{ index: 0, message: { role: 'assistant', content: `answer ${calls}` }, finish_reason: 'stop' }] }),
        );
      });
      let connections = 0;
      keep.http.on('connection', () => connections++);
      try {
        const model = provider({ baseUrl: keep.url, stream: false });
        for (let i = 1; i <= 6; i++) expect((await model.complete(ask(`call ${i}`))).text).toBe(`answer ${i}`);

        // undici may open a second socket while the first is being handed back; none is dropped.
        expect(connections).toBeLessThanOrEqual(2);
      } finally {
        await keep.close();
      }
    });

    it('assembles a stream of hundreds of separately written events', async () => {
      const words = Array.from({ length: 400 }, (_, i) => `w${i} `);
      const slow = await startServer((req, res) => {
        req.resume();
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        let i = 0;
        const next = () => {
          if (i < words.length) {
            res.write(`data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: words[i++] } }] })}\n\n`);
            setImmediate(next);
          } else {
            res.end(`data: ${JSON.stringify({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] })}\n\ndata: [DONE]\n\n`);
          }
        };
        next();
      });
      try {
        const response = await provider({ baseUrl: slow.url }).complete(ask('hi'));

        expect(response.text).toBe(words.join(''));
        expect(response.finishReason).toBe('stop');
      } finally {
        await slow.close();
      }
    });

    it('refuses an answer larger than 16 MiB without retrying it', async () => {
      let hits = 0;
      const huge = await startServer((req, res) => {
        hits++;
        req.resume();
        res.writeHead(200, { 'content-type': 'application/json' });
        const mebibyte = 'x'.repeat(1024 * 1024);
        for (let i = 0; i < 17; i++) res.write(mebibyte);
        res.end();
      });
      try {
        const error = await provider({ baseUrl: huge.url, stream: false })
          .complete(ask('hi'))
          .catch((e: unknown) => e);

        expect(error).toBeInstanceOf(ModelProviderError);
        expect((error as ModelProviderError).message).toContain('the answer is larger than 16 MiB');
        expect((error as ModelProviderError).retryable).toBe(false);
        expect(hits).toBe(1);
      } finally {
        await huge.close();
      }
    });
  });

  describe('API key', () => {
    it('sends Authorization: Bearer when a key is set', async () => {
      await provider({ apiKey: 'sk-test-123' }).complete(ask('hi'));

      expect(server.headers[0].authorization).toBe('Bearer sk-test-123');
    });

    it('sends no Authorization header without a key', async () => {
      await provider().complete(ask('hi'));

      expect(server.headers[0]).not.toHaveProperty('authorization');
    });

    it('keeps the key out of error messages even when the server quotes it', async () => {
      server.script({ status: 401, body: { error: { message: 'Incorrect API key provided: sk-secret-999' } } });

      const error = await provider({ apiKey: 'sk-secret-999' })
        .complete(ask('hi'))
        .catch((e: unknown) => e);

      expect((error as Error).message).toContain('HTTP 401 Unauthorized: Incorrect API key provided: [REDACTED]');
      expect((error as Error).message).not.toContain('sk-secret-999');
    });
  });
});

/** A URL on which nothing listens: a server is bound to get a free port, then closed. */
async function unusedLocalUrl(): Promise<string> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return `http://127.0.0.1:${port}/v1`;
}

/** A plain HTTP server on 127.0.0.1 answering every request with `handler`; its base URL ends in /v1. */
async function startServer(handler: RequestListener) {
  const http = createServer(handler);
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  return {
    http,
    url: `http://127.0.0.1:${port}/v1`,
    close: () =>
      new Promise((resolve) => {
        http.closeAllConnections();
        http.close(resolve);
      }),
  };
}

/** Sends one content delta, then ends the response without finish_reason or [DONE]. */
async function startTruncatingServer() {
  let hits = 0;
  const cut = await startServer((req, res) => {
    hits++;
    req.resume();
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.end(`data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: 'Half an ans' } }] })}\n\n`);
  });
  return { ...cut, hits: () => hits };
}

describeModelProviderContract('OpenAiChatProvider', async () => {
  const scripted = await startScriptedOpenAiServer();
  return {
    provider: ({ stream, apiKey, maxRetries, timeoutMs }) =>
      new OpenAiChatProvider({ baseUrl: scripted.url, model: 'test-model', apiKey, stream, maxRetries, timeoutMs, retryBaseDelayMs: 5 }),
    script: (...replies) =>
      scripted.script(
        ...replies.map((reply): ScriptedReply => {
          if ('hang' in reply) return reply;
          if ('status' in reply)
            return { status: reply.status, retryAfter: reply.retryAfter, body: { error: { message: reply.message ?? 'scripted' } } };
          return {
            text: reply.text,
            toolCalls: reply.toolCalls,
            usage: reply.usage && {
              inputTokens: reply.usage.inputTokens,
              outputTokens: reply.usage.outputTokens,
              cacheReadTokens: reply.usage.cacheReadTokens,
            },
          };
        }),
      ),
    requestCount: () => scripted.requests.length,
    close: () => scripted.close(),
  };
});
