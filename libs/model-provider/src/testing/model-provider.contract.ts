import { ModelCallAbortedError, ModelProviderError } from '../model-provider.errors';
import type { ModelProvider, ModelRequest, ToolDefinition } from '../model-provider.port';

// The behaviour every ModelProvider adapter owes the agent loop, whatever its wire protocol. Each
// adapter's spec calls describeModelProviderContract with a harness that scripts its own protocol's
// server (testing/scripted-*-server.ts) from these protocol-free replies.

export interface ContractAnswer {
  readonly text?: string;
  readonly toolCalls?: readonly { readonly id: string; readonly name: string; readonly arguments: Record<string, unknown> }[];
  /** As the port counts them: inputTokens includes the cache reads. */
  readonly usage?: { readonly inputTokens: number; readonly outputTokens: number; readonly cacheReadTokens?: number };
}

export interface ContractError {
  readonly status: number;
  readonly message?: string;
  /** Seconds, sent as `retry-after`. */
  readonly retryAfter?: number;
}

export type ContractReply = ContractAnswer | ContractError | { readonly hang: true };

export interface ModelProviderHarness {
  provider(options: {
    readonly stream: boolean;
    readonly apiKey: string;
    readonly maxRetries?: number;
    readonly timeoutMs?: number;
  }): ModelProvider;
  script(...replies: ContractReply[]): void;
  /** Requests the server has received so far. */
  requestCount(): number;
  close(): Promise<void>;
}

const ask = (text: string, extra: Partial<ModelRequest> = {}): ModelRequest => ({
  messages: [
    { role: 'system', content: 'You are terse.' },
    { role: 'user', content: text },
  ],
  tools: [readFileTool],
  ...extra,
});

const readFileTool: ToolDefinition = {
  name: 'read_file',
  description: 'Reads a file of the workspace',
  parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
};

export function describeModelProviderContract(adapter: string, start: () => Promise<ModelProviderHarness>): void {
  describe(`${adapter}: the ModelProvider contract`, () => {
    let harness: ModelProviderHarness;
    beforeEach(async () => {
      harness = await start();
    });
    afterEach(() => harness.close());

    describe.each([true, false])('stream: %s', (stream) => {
      it('returns a text answer with finish reason stop', async () => {
        harness.script({ text: 'The quick brown fox jumps' });

        const response = await harness.provider({ stream, apiKey: 'k' }).complete(ask('hi'));

        expect(response).toMatchObject({ text: 'The quick brown fox jumps', toolCalls: [], finishReason: 'stop' });
      });

      it('returns two tool calls of one answer, with their ids, names and parsed arguments', async () => {
        const toolCalls = [
          { id: 'call_a', name: 'read_file', arguments: { path: 'notes/todo.md' } },
          { id: 'call_b', name: 'read_file', arguments: { path: 'src/main.ts' } },
        ];
        harness.script({ toolCalls });

        const response = await harness.provider({ stream, apiKey: 'k' }).complete(ask('read both'));

        expect(response.toolCalls).toEqual(toolCalls);
        expect(response.finishReason).toBe('tool_calls');
      });

      it('counts cache reads in usage, as part of inputTokens', async () => {
        harness.script({ text: 'cached', usage: { inputTokens: 1200, outputTokens: 7, cacheReadTokens: 1000 } });

        const { usage } = await harness.provider({ stream, apiKey: 'k' }).complete(ask('hi'));

        expect(usage).toMatchObject({ inputTokens: 1200, outputTokens: 7, totalTokens: 1207, cacheReadTokens: 1000 });
      });

      it('reports zero cache tokens when the provider reports none', async () => {
        harness.script({ text: 'fresh', usage: { inputTokens: 30, outputTokens: 5 } });

        const { usage } = await harness.provider({ stream, apiKey: 'k' }).complete(ask('hi'));

        expect(usage).toEqual({ inputTokens: 30, outputTokens: 5, totalTokens: 35, cacheReadTokens: 0, cacheWriteTokens: 0 });
      });
    });

    it('retries a 429 after the retry-after the server asked for', async () => {
      harness.script({ status: 429, retryAfter: 1 }, { text: 'after the wait' });
      const started = Date.now();

      const response = await harness.provider({ stream: true, apiKey: 'k' }).complete(ask('hi'));

      expect(response.text).toBe('after the wait');
      expect(Date.now() - started).toBeGreaterThanOrEqual(950);
      expect(harness.requestCount()).toBe(2);
    });

    it('gives up after maxRetries + 1 attempts of 500, as a retryable ModelProviderError', async () => {
      harness.script({ status: 500 }, { status: 500 }, { status: 500 });

      const error = await harness
        .provider({ stream: true, apiKey: 'k', maxRetries: 2 })
        .complete(ask('hi'))
        .catch((e: unknown) => e);

      expect(error).toBeInstanceOf(ModelProviderError);
      expect(error).toMatchObject({ retryable: true, message: expect.stringContaining('failed after 3 attempts; last error: HTTP 500') });
      expect(harness.requestCount()).toBe(3);
    });

    it('does not retry a 400 and passes on the provider message', async () => {
      harness.script({ status: 400, message: 'messages: field required' });

      const error = await harness
        .provider({ stream: true, apiKey: 'k' })
        .complete(ask('hi'))
        .catch((e: unknown) => e);

      expect(error).toMatchObject({ retryable: false, message: expect.stringContaining('HTTP 400 Bad Request: messages: field required') });
      expect(harness.requestCount()).toBe(1);
    });

    it('keeps the API key out of error messages even when the server quotes it', async () => {
      const apiKey = 'sk-contract-SECRET-0123456789';
      harness.script({ status: 401, message: `invalid x-api-key / bearer: ${apiKey}` });

      const error = (await harness
        .provider({ stream: true, apiKey })
        .complete(ask('hi'))
        .catch((e: unknown) => e)) as Error;

      expect(error.message).toContain('HTTP 401');
      expect(error.message).toContain('[REDACTED]');
      expect(error.message).not.toContain(apiKey);
    });

    it('retries an attempt that hangs past timeoutMs', async () => {
      harness.script({ hang: true }, { text: 'second try' });

      const response = await harness.provider({ stream: true, apiKey: 'k', timeoutMs: 200 }).complete(ask('hi'));

      expect(response.text).toBe('second try');
    });

    it('stops a hanging call at once when the signal fires, without retrying', async () => {
      harness.script({ hang: true });
      const controller = new AbortController();
      setTimeout(() => controller.abort(), 50);

      const error = await harness
        .provider({ stream: true, apiKey: 'k' })
        .complete(ask('hi', { signal: controller.signal }))
        .catch((e: unknown) => e);

      expect(error).toBeInstanceOf(ModelCallAbortedError);
      expect(harness.requestCount()).toBe(1);
    });
  });
}
