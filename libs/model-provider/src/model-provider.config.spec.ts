import type { ScriptedOpenAiServer } from '@app/model-provider/testing/scripted-openai-server';
import { startScriptedOpenAiServer } from '@app/model-provider/testing/scripted-openai-server';
import { startScriptedAnthropicServer } from '@app/model-provider/testing/scripted-anthropic-server';
import { AnthropicMessagesProvider } from './anthropic/anthropic-messages.provider';
import { createModelProviderFromEnv, describeModelConfig, resolveModelConfig } from './model-provider.config';
import { ModelNotConfiguredError } from './model-provider.errors';
import { NotConfiguredModelProvider } from './not-configured.provider';
import { OpenAiChatProvider } from './openai-compatible/openai-chat.provider';

const ask = { messages: [{ role: 'user' as const, content: 'hi' }], tools: [] };

async function notConfiguredMessage(env: NodeJS.ProcessEnv): Promise<string> {
  const provider = createModelProviderFromEnv(env);
  expect(provider).toBeInstanceOf(NotConfiguredModelProvider);
  const error = await provider.complete(ask).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(ModelNotConfiguredError);
  return (error as Error).message;
}

describe('createModelProviderFromEnv', () => {
  describe('when no model is configured', () => {
    it('names every variable to set when nothing is set', async () => {
      expect(await notConfiguredMessage({})).toBe(
        'No model is configured: set LLM_MODEL and LLM_BASE_URL (an OpenAI-compatible chat-completions endpoint, e.g. http://127.0.0.1:11434/v1), or LLM_API_KEY and LLM_MODEL for OpenAI.',
      );
    });

    it('treats blank variables as unset', async () => {
      expect(await notConfiguredMessage({ LLM_BASE_URL: ' ', LLM_API_KEY: '', LLM_MODEL: '' })).toMatch(
        /^No model is configured: set LLM_MODEL and LLM_BASE_URL/,
      );
    });

    it('asks only for LLM_MODEL when LLM_BASE_URL is set', async () => {
      expect(await notConfiguredMessage({ LLM_BASE_URL: 'http://127.0.0.1:11434/v1' })).toBe(
        'No model is configured: set LLM_MODEL (the model name to request from LLM_BASE_URL).',
      );
    });

    it('asks only for LLM_MODEL when LLM_API_KEY is set', async () => {
      expect(await notConfiguredMessage({ LLM_API_KEY: 'sk-x' })).toBe(
        'No model is configured: set LLM_MODEL (an OpenAI model name, e.g. gpt-4o-mini).',
      );
    });

    it('asks for an endpoint or a key when only LLM_MODEL is set', async () => {
      expect(await notConfiguredMessage({ LLM_MODEL: 'llama3.1' })).toBe(
        'No model is configured: set LLM_BASE_URL (an OpenAI-compatible chat-completions endpoint, e.g. http://127.0.0.1:11434/v1), or LLM_API_KEY for OpenAI.',
      );
    });

    it('asks for LLM_BASE_URL when LLM_PROVIDER=openai-compatible has none', async () => {
      expect(await notConfiguredMessage({ LLM_PROVIDER: 'openai-compatible', LLM_MODEL: 'm' })).toBe(
        'No model is configured: set LLM_BASE_URL (an OpenAI-compatible chat-completions endpoint, e.g. http://127.0.0.1:11434/v1).',
      );
    });

    it('asks for LLM_API_KEY when LLM_PROVIDER=openai has none', async () => {
      expect(await notConfiguredMessage({ LLM_PROVIDER: 'openai', LLM_MODEL: 'gpt-4o-mini' })).toBe(
        'No model is configured: set LLM_API_KEY (your OpenAI API key).',
      );
    });

    it('asks for LLM_MODEL when LLM_PROVIDER=ollama has none', async () => {
      expect(await notConfiguredMessage({ LLM_PROVIDER: 'ollama' })).toBe(
        'No model is configured: set LLM_MODEL (a model pulled into Ollama, e.g. llama3.1).',
      );
    });

    it('asks for LLM_API_KEY and LLM_MODEL when LLM_PROVIDER=anthropic has neither', async () => {
      expect(await notConfiguredMessage({ LLM_PROVIDER: 'anthropic' })).toBe(
        'No model is configured: set LLM_API_KEY (your Anthropic API key, sent as x-api-key) and LLM_MODEL (an Anthropic model name, e.g. claude-sonnet-4-5).',
      );
    });

    it('rejects an LLM_MAX_TOKENS that is not a positive whole number', async () => {
      expect(await notConfiguredMessage({ LLM_PROVIDER: 'anthropic', LLM_API_KEY: 'k', LLM_MODEL: 'claude', LLM_MAX_TOKENS: '0' })).toBe(
        'Model configuration is invalid: LLM_MAX_TOKENS must be a whole number of at least 1 (got "0").',
      );
    });

    it('rejects an unknown LLM_PROVIDER, listing the accepted ones', async () => {
      expect(await notConfiguredMessage({ LLM_PROVIDER: 'gemini', LLM_MODEL: 'm' })).toBe(
        'Model configuration is invalid: LLM_PROVIDER is "gemini"; set it to one of openai-compatible, openai, anthropic, ollama, or unset it to choose from LLM_BASE_URL / LLM_API_KEY.',
      );
    });

    it('reports malformed tuning variables and a non-http base URL together', async () => {
      const env = { LLM_BASE_URL: 'ftp://host/v1', LLM_MODEL: 'm', LLM_STREAM: 'maybe', LLM_TIMEOUT_MS: '0', LLM_MAX_RETRIES: '-1' };

      expect(await notConfiguredMessage(env)).toBe(
        'Model configuration is invalid: LLM_BASE_URL must be an http(s) URL; LLM_STREAM must be true or false; LLM_TIMEOUT_MS must be a whole number of at least 1 (got "0"); LLM_MAX_RETRIES must be a whole number (got "-1").',
      );
    });
  });

  describe('provider selection', () => {
    it.each([
      [{ LLM_BASE_URL: 'http://h:1/v1', LLM_MODEL: 'm' }, 'openai-compatible', 'LLM_BASE_URL', 'http://h:1/v1'],
      [{ LLM_BASE_URL: 'http://h:1/v1', LLM_API_KEY: 'k', LLM_MODEL: 'm' }, 'openai-compatible', 'LLM_BASE_URL', 'http://h:1/v1'],
      [{ LLM_API_KEY: 'k', LLM_MODEL: 'm' }, 'openai', 'LLM_API_KEY', 'https://api.openai.com/v1'],
      [{ LLM_PROVIDER: 'ollama', LLM_MODEL: 'm' }, 'ollama', 'LLM_PROVIDER', 'http://127.0.0.1:11434/v1'],
      [
        { LLM_PROVIDER: 'OpenAI', LLM_API_KEY: 'k', LLM_MODEL: 'm', LLM_BASE_URL: 'https://proxy/v1/' },
        'openai',
        'LLM_PROVIDER',
        'https://proxy/v1',
      ],
      [{ LLM_BASE_URL: 'http://h:1/v1/chat/completions', LLM_MODEL: 'm' }, 'openai-compatible', 'LLM_BASE_URL', 'http://h:1/v1'],
    ])('%j → %s chosen by %s at %s', (env, provider, chosenBy, baseUrl) => {
      expect(resolveModelConfig(env)).toMatchObject({ status: 'ready', provider, chosenBy, baseUrl });
      expect(createModelProviderFromEnv(env)).toBeInstanceOf(OpenAiChatProvider);
      expect(createModelProviderFromEnv(env).name).toBe(provider);
    });

    it('defaults to streaming, 120 s per attempt and 4 retries, and reads overrides', () => {
      expect(resolveModelConfig({ LLM_API_KEY: 'k', LLM_MODEL: 'm' })).toMatchObject({ stream: true, timeoutMs: 120_000, maxRetries: 4 });
      expect(
        resolveModelConfig({ LLM_API_KEY: 'k', LLM_MODEL: 'm', LLM_STREAM: 'false', LLM_TIMEOUT_MS: '5000', LLM_MAX_RETRIES: '0' }),
      ).toMatchObject({ stream: false, timeoutMs: 5000, maxRetries: 0 });
    });
  });

  describe('LLM_PROVIDER=anthropic', () => {
    it.each([
      [{}, 'https://api.anthropic.com'],
      [{ LLM_BASE_URL: 'https://proxy.example.com/v1/messages' }, 'https://proxy.example.com'],
      [{ LLM_BASE_URL: 'https://proxy.example.com/v1/' }, 'https://proxy.example.com'],
    ])('%j → an Anthropic provider at %s, max_tokens 8192 unless LLM_MAX_TOKENS says', (extra, baseUrl) => {
      const env = { LLM_PROVIDER: 'anthropic', LLM_API_KEY: 'sk-ant', LLM_MODEL: 'claude-sonnet-4-5', ...extra };

      expect(resolveModelConfig(env)).toMatchObject({ status: 'ready', provider: 'anthropic', baseUrl, maxTokens: 8192 });
      expect(resolveModelConfig({ ...env, LLM_MAX_TOKENS: '1024' })).toMatchObject({ maxTokens: 1024 });
      expect(createModelProviderFromEnv(env)).toBeInstanceOf(AnthropicMessagesProvider);
    });

    it('sends LLM_MODEL, LLM_API_KEY and LLM_MAX_TOKENS to ${LLM_BASE_URL}/v1/messages', async () => {
      const server = await startScriptedAnthropicServer();
      try {
        server.script({ text: 'configured' });
        const provider = createModelProviderFromEnv({
          LLM_PROVIDER: 'anthropic',
          LLM_BASE_URL: server.url,
          LLM_MODEL: 'claude-haiku',
          LLM_API_KEY: 'sk-ant-local',
          LLM_MAX_TOKENS: '2048',
        });

        expect((await provider.complete(ask)).text).toBe('configured');
        expect(server.requests[0]).toMatchObject({ model: 'claude-haiku', max_tokens: 2048, stream: true });
        expect(server.headers[0]).toMatchObject({ 'x-api-key': 'sk-ant-local', 'anthropic-version': '2023-06-01' });
      } finally {
        await server.close();
      }
    });

    it('describes itself with its max_tokens and without the key', () => {
      const line = describeModelConfig({ LLM_PROVIDER: 'anthropic', LLM_API_KEY: 'sk-ant-secret', LLM_MODEL: 'claude-sonnet-4-5' });

      expect(line).toBe(
        'model provider: anthropic (chosen by LLM_PROVIDER), model "claude-sonnet-4-5" at https://api.anthropic.com, streaming, timeout 120000 ms per attempt, up to 4 retries, max_tokens 8192, API key set',
      );
    });
  });

  describe('against a scripted server', () => {
    let server: ScriptedOpenAiServer;
    beforeEach(async () => {
      server = await startScriptedOpenAiServer();
    });
    afterEach(() => server.close());

    it('sends LLM_MODEL, LLM_API_KEY and LLM_STREAM=false to LLM_BASE_URL', async () => {
      server.script({ text: 'configured' });
      const provider = createModelProviderFromEnv({
        LLM_BASE_URL: server.url,
        LLM_MODEL: 'local-7b',
        LLM_API_KEY: 'sk-local',
        LLM_STREAM: 'false',
      });

      const response = await provider.complete(ask);

      expect(response.text).toBe('configured');
      expect(server.requests[0]).toMatchObject({ model: 'local-7b' });
      expect(server.requests[0]).not.toHaveProperty('stream');
      expect(server.headers[0].authorization).toBe('Bearer sk-local');
    });
  });
});

describe('describeModelConfig', () => {
  it('describes a ready configuration in one line without the key or URL credentials', () => {
    const line = describeModelConfig({
      LLM_BASE_URL: 'https://user:hunter2@llm.example.com/v1?token=abc',
      LLM_API_KEY: 'sk-very-secret',
      LLM_MODEL: 'gpt-4o-mini',
    });

    expect(line).toBe(
      'model provider: openai-compatible (chosen by LLM_BASE_URL), model "gpt-4o-mini" at https://llm.example.com/v1, streaming, timeout 120000 ms per attempt, up to 4 retries, API key set',
    );
    expect(line).not.toMatch(/hunter2|sk-very-secret|token=abc/);
    expect(line).not.toContain('\n');
  });

  it('repeats the not-configured reason', () => {
    expect(describeModelConfig({ LLM_BASE_URL: 'http://h/v1' })).toBe(
      'model provider: not configured. No model is configured: set LLM_MODEL (the model name to request from LLM_BASE_URL).',
    );
  });
});
