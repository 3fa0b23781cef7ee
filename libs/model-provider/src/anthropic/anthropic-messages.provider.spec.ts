import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describeModelProviderContract } from '@app/model-provider/testing/model-provider.contract';
import type { ScriptedAnthropicReply, ScriptedAnthropicServer } from '@app/model-provider/testing/scripted-anthropic-server';
import { startScriptedAnthropicServer } from '@app/model-provider/testing/scripted-anthropic-server';
import { ModelProviderError } from '../model-provider.errors';
import type { ChatMessage, ModelRequest, ToolDefinition } from '../model-provider.port';
import type { AnthropicMessagesProviderOptions } from './anthropic-messages.provider';
import { AnthropicMessagesProvider } from './anthropic-messages.provider';

// Every test talks to a real HTTP server on 127.0.0.1 speaking the Messages API, so SSE framing,
// status codes and headers are the real ones.

describeModelProviderContract('AnthropicMessagesProvider', async () => {
  const scripted = await startScriptedAnthropicServer();
  return {
    provider: ({ stream, apiKey, maxRetries, timeoutMs }) =>
      new AnthropicMessagesProvider({
        baseUrl: scripted.url,
        model: 'claude-test',
        apiKey,
        stream,
        maxRetries,
        timeoutMs,
        retryBaseDelayMs: 5,
      }),
    script: (...replies) =>
      scripted.script(
        ...replies.map((reply): ScriptedAnthropicReply => {
          if ('hang' in reply) return reply;
          if ('status' in reply) {
            return {
              status: reply.status,
              retryAfter: reply.retryAfter,
              body: { type: 'error', error: { type: 'scripted', message: reply.message ?? 'scripted' } },
            };
          }
          const { usage } = reply;
          return {
            text: reply.text,
            toolUses: reply.toolCalls?.map((call) => ({ id: call.id, name: call.name, input: call.arguments })),
            // Anthropic's input_tokens leaves the cache reads out.
            usage: usage && {
              inputTokens: usage.inputTokens - (usage.cacheReadTokens ?? 0),
              outputTokens: usage.outputTokens,
              cacheReadTokens: usage.cacheReadTokens,
            },
          };
        }),
      ),
    requestCount: () => scripted.requests.length,
    close: () => scripted.close(),
  };
});

let server: ScriptedAnthropicServer;
beforeEach(async () => {
  server = await startScriptedAnthropicServer();
});
afterEach(() => server.close());

const API_KEY = 'sk-ant-test-SECRET-abcdef0123';

function provider(options: Partial<AnthropicMessagesProviderOptions> = {}): AnthropicMessagesProvider {
  return new AnthropicMessagesProvider({ baseUrl: server.url, apiKey: API_KEY, model: 'claude-test', retryBaseDelayMs: 5, ...options });
}

const readFileTool: ToolDefinition = {
  name: 'read_file',
  description: 'Reads a file of the workspace',
  parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
};
const shellTool: ToolDefinition = { name: 'shell', description: 'Runs a command', parameters: { type: 'object', properties: {} } };

const ask = (text: string, extra: Partial<ModelRequest> = {}): ModelRequest => ({
  messages: [{ role: 'user', content: text }],
  tools: [],
  ...extra,
});

describe('AnthropicMessagesProvider', () => {
  describe('request mapping', () => {
    const conversation: ChatMessage[] = [
      { role: 'system', content: 'You are an agent.' },
      { role: 'user', content: 'Read both files' },
      {
        role: 'assistant',
        content: 'Reading them.',
        toolCalls: [
          { id: 'toolu_a', name: 'read_file', arguments: { path: 'a.md' } },
          { id: 'toolu_b', name: 'read_file', arguments: { path: 'b.md' } },
        ],
      },
      { role: 'tool', toolCallId: 'toolu_a', content: 'A' },
      { role: 'tool', toolCallId: 'toolu_b', content: 'B' },
      { role: 'assistant', content: 'Both read.' },
      { role: 'user', content: 'Thanks' },
    ];

    it('sends the system prompt as `system`, tool calls as tool_use blocks and their results as ONE user message of tool_result blocks', async () => {
      await provider().complete({ messages: conversation, tools: [readFileTool, shellTool] });

      const body = server.requests[0];
      expect(body).toMatchObject({ model: 'claude-test', max_tokens: 8192, stream: true });
      expect(body.system).toEqual([{ type: 'text', text: 'You are an agent.', cache_control: { type: 'ephemeral' } }]);
      expect(body.messages).toEqual([
        { role: 'user', content: [{ type: 'text', text: 'Read both files' }] },
        {
          role: 'assistant',
          content: [
            { type: 'text', text: 'Reading them.' },
            { type: 'tool_use', id: 'toolu_a', name: 'read_file', input: { path: 'a.md' } },
            { type: 'tool_use', id: 'toolu_b', name: 'read_file', input: { path: 'b.md' } },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'toolu_a', content: 'A' },
            { type: 'tool_result', tool_use_id: 'toolu_b', content: 'B' },
          ],
        },
        { role: 'assistant', content: [{ type: 'text', text: 'Both read.' }] },
        { role: 'user', content: [{ type: 'text', text: 'Thanks' }] },
      ]);
    });

    it('offers tools as Anthropic tool definitions, the last one marked for the prompt cache', async () => {
      await provider().complete(ask('hi', { tools: [readFileTool, shellTool] }));

      expect(server.requests[0].tools).toEqual([
        { name: 'read_file', description: readFileTool.description, input_schema: readFileTool.parameters },
        { name: 'shell', description: shellTool.description, input_schema: shellTool.parameters, cache_control: { type: 'ephemeral' } },
      ]);
    });

    it('leaves tools and system out when there are none, and sends maxTokens as max_tokens', async () => {
      await provider({ maxTokens: 1024, stream: false }).complete(ask('hi'));

      expect(server.requests[0]).toEqual({
        model: 'claude-test',
        max_tokens: 1024,
        messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }],
      });
    });

    it('sends x-api-key and anthropic-version 2023-06-01 to /v1/messages', async () => {
      await provider().complete(ask('hi'));

      expect(server.headers[0]).toMatchObject({ 'x-api-key': API_KEY, 'anthropic-version': '2023-06-01' });
      expect(server.headers[0].authorization).toBeUndefined();
    });

    it('round-trips the tool calls it returned into the next request', async () => {
      server.script({ toolUses: [{ id: 'toolu_1', name: 'read_file', input: { path: 'x' } }] });
      const first = await provider().complete(ask('go', { tools: [readFileTool] }));

      await provider().complete({
        messages: [
          { role: 'user', content: 'go' },
          { role: 'assistant', content: first.text || null, toolCalls: first.toolCalls },
          { role: 'tool', toolCallId: first.toolCalls[0].id, content: 'file x' },
        ],
        tools: [readFileTool],
      });

      expect(server.requests[1].messages).toEqual([
        { role: 'user', content: [{ type: 'text', text: 'go' }] },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'read_file', input: { path: 'x' } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'file x' }] },
      ]);
    });
  });

  describe('answers', () => {
    it.each([true, false])('reads text and tool_use blocks of one answer (stream: %s)', async (stream) => {
      server.script({ text: 'Let me look.', toolUses: [{ id: 'toolu_x', name: 'shell', input: { command: 'ls' } }] });

      const response = await provider({ stream }).complete(ask('hi'));

      expect(response).toEqual({
        text: 'Let me look.',
        toolCalls: [{ id: 'toolu_x', name: 'shell', arguments: { command: 'ls' } }],
        usage: expect.any(Object),
        model: 'claude-test',
        finishReason: 'tool_calls',
        id: 'msg_scripted',
      });
    });

    it.each([
      ['end_turn', 'stop'],
      ['tool_use', 'tool_calls'],
      ['max_tokens', 'length'],
      ['stop_sequence', 'stop_sequence'],
      ['refusal', 'refusal'],
    ])('maps stop_reason %s to finish reason %s', async (stopReason, finishReason) => {
      server.script({ text: 'x', stopReason }, { text: 'x', stopReason });

      expect((await provider().complete(ask('hi'))).finishReason).toBe(finishReason);
      expect((await provider({ stream: false }).complete(ask('hi'))).finishReason).toBe(finishReason);
    });

    it.each([true, false])('counts cache reads and writes into inputTokens and totalTokens (stream: %s)', async (stream) => {
      server.script({ text: 'x', usage: { inputTokens: 20, outputTokens: 10, cacheReadTokens: 3000, cacheWriteTokens: 500 } });

      const { usage } = await provider({ stream }).complete(ask('hi'));

      expect(usage).toEqual({ inputTokens: 3520, outputTokens: 10, totalTokens: 3530, cacheReadTokens: 3000, cacheWriteTokens: 500 });
    });
  });

  describe('retries', () => {
    it('retries a 529 overloaded after its retry-after', async () => {
      server.script({ status: 529, retryAfter: 1 }, { text: 'back' });
      const started = Date.now();

      const response = await provider().complete(ask('hi'));

      expect(response.text).toBe('back');
      expect(Date.now() - started).toBeGreaterThanOrEqual(950);
      expect(server.requests).toHaveLength(2);
    });

    it('retries an overloaded_error event inside a stream', async () => {
      server.script({ streamError: { type: 'overloaded_error', message: 'Overloaded' } }, { text: 'second try' });

      const response = await provider().complete(ask('hi'));

      expect(response.text).toBe('second try');
      expect(server.requests).toHaveLength(2);
    });

    it('names the stream error when every attempt gets one', async () => {
      server.script(...Array(2).fill({ streamError: { type: 'overloaded_error', message: 'Overloaded' } }));

      const error = await provider({ maxRetries: 1 })
        .complete(ask('hi'))
        .catch((e: unknown) => e);

      expect(error).toBeInstanceOf(ModelProviderError);
      expect((error as Error).message).toBe(
        `Model call to anthropic (model "claude-test" at ${server.url}) failed after 2 attempts; last error: the server reported overloaded_error: Overloaded`,
      );
    });

    it('retries a stream cut off before message_stop', async () => {
      let hits = 0;
      const cut = createServer((_req, res) => {
        hits++;
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        const start = { type: 'message_start', message: { model: 'claude-test', usage: { input_tokens: 1, output_tokens: 1 } } };
        res.end(`event: message_start\ndata: ${JSON.stringify(start)}\n\n`);
      });
      await new Promise<void>((resolve) => cut.listen(0, '127.0.0.1', resolve));
      try {
        const baseUrl = `http://127.0.0.1:${(cut.address() as AddressInfo).port}`;
        const error = await provider({ baseUrl, maxRetries: 1 })
          .complete(ask('hi'))
          .catch((e: unknown) => e);

        expect((error as Error).message).toContain('failed after 2 attempts; last error: the stream ended before message_stop');
        expect(hits).toBe(2);
      } finally {
        cut.closeAllConnections();
        await new Promise((resolve) => cut.close(resolve));
      }
    });

    it('does not retry an invalid_request_error and surfaces its message without the key', async () => {
      server.script({
        status: 400,
        body: { type: 'error', error: { type: 'invalid_request_error', message: `bad key ${API_KEY} in body` } },
      });

      const error = (await provider()
        .complete(ask('hi'))
        .catch((e: unknown) => e)) as ModelProviderError;

      expect(error.retryable).toBe(false);
      expect(error.message).toBe(
        `Model call to anthropic (model "claude-test" at ${server.url}) failed: HTTP 400 Bad Request: bad key [REDACTED] in body`,
      );
    });
  });
});
