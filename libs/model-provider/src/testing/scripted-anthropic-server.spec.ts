import type { ScriptedAnthropicServer } from './scripted-anthropic-server';
import { startScriptedAnthropicServer } from './scripted-anthropic-server';

// The provider spec covers the adapter; these pin what the server says on the wire, as the real
// Messages API does, so the adapter is tested against the documented shapes.

const post = (url: string, body: unknown, headers: Record<string, string> = { 'x-api-key': 'k', 'anthropic-version': '2023-06-01' }) =>
  fetch(`${url}/v1/messages`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });

describe('startScriptedAnthropicServer', () => {
  let server: ScriptedAnthropicServer | undefined;
  afterEach(() => server?.close());

  it('streams the documented event sequence, a ping included, each event named on its `event:` line', async () => {
    server = await startScriptedAnthropicServer();
    server.script({ text: 'hi', toolUses: [{ id: 'toolu_1', name: 'ls', input: { path: '.' } }] });

    const text = await (await post(server.url, { model: 'm', max_tokens: 10, messages: [], stream: true })).text();

    const blocks = text.trim().split('\n\n');
    const names = blocks.map((block) => /^event: (\S+)/.exec(block)?.[1]);
    expect(names).toEqual([
      'message_start',
      'ping',
      'content_block_start',
      'content_block_delta',
      'content_block_delta',
      'content_block_stop',
      'content_block_start',
      'content_block_delta',
      'content_block_delta',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    for (const block of blocks) expect(JSON.parse(block.split('\ndata: ')[1]).type).toBe(/^event: (\S+)/.exec(block)![1]);
  });

  it('answers a whole message with content blocks, stop_reason and usage split as Anthropic reports it', async () => {
    server = await startScriptedAnthropicServer();
    server.script({ text: 'hello', usage: { inputTokens: 5, outputTokens: 2, cacheReadTokens: 100, cacheWriteTokens: 7 } });

    const body = await (await post(server.url, { model: 'claude', max_tokens: 10, messages: [] })).json();

    expect(body).toEqual({
      id: 'msg_scripted',
      type: 'message',
      role: 'assistant',
      model: 'claude',
      content: [{ type: 'text', text: 'hello' }],
      stop_reason: 'end_turn',
      stop_sequence: null,
      usage: { input_tokens: 5, output_tokens: 2, cache_read_input_tokens: 100, cache_creation_input_tokens: 7 },
    });
  });

  it('sends an overload as 529 overloaded_error with retry-after', async () => {
    server = await startScriptedAnthropicServer();
    server.script({ status: 529, retryAfter: 2 });

    const response = await post(server.url, { model: 'm', max_tokens: 10, messages: [] });

    expect(response.status).toBe(529);
    expect(response.headers.get('retry-after')).toBe('2');
    expect(await response.json()).toEqual({ type: 'error', error: { type: 'overloaded_error', message: 'scripted error 529' } });
  });

  it('refuses, as the API does, a request without x-api-key, anthropic-version or max_tokens', async () => {
    server = await startScriptedAnthropicServer();

    expect((await post(server.url, { model: 'm', max_tokens: 1, messages: [] }, { 'anthropic-version': '2023-06-01' })).status).toBe(401);
    expect((await post(server.url, { model: 'm', max_tokens: 1, messages: [] }, { 'x-api-key': 'k' })).status).toBe(400);
    expect((await post(server.url, { model: 'm', messages: [] })).status).toBe(400);
    expect(server.requests).toHaveLength(0);
  });
});
