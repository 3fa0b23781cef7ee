import type { ScriptedOpenAiServer } from './scripted-openai-server';
import { startScriptedOpenAiServer } from './scripted-openai-server';

// The provider spec covers the protocol; these pin the scripting behaviours tests rely on.

const post = (url: string, body: unknown) =>
  fetch(`${url}/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

/** The assistant text of a non-streaming answer. */
const answer = async (response: Promise<Response>): Promise<string> =>
  ((await (await response).json()) as { choices: { message: { content: string } }[] }).choices[0].message.content;

describe('startScriptedOpenAiServer', () => {
  let server: ScriptedOpenAiServer | undefined;
  afterEach(() => server?.close());

  it('answers "ok" once the script runs out', async () => {
    server = await startScriptedOpenAiServer();
    server.script({ text: 'first' });

    expect(await answer(post(server.url, { model: 'm', messages: [] }))).toBe('first');
    expect(await answer(post(server.url, { model: 'm', messages: [] }))).toBe('ok');
  });

  it('clear() drops the replies not taken yet, and says how many', async () => {
    server = await startScriptedOpenAiServer();
    server.script({ text: 'taken' }, { text: 'left' }, { text: 'left too' });
    expect(await answer(post(server.url, { model: 'm', messages: [] }))).toBe('taken');

    expect(server.clear()).toBe(2);

    expect(await answer(post(server.url, { model: 'm', messages: [] }))).toBe('ok');
    expect(server.clear()).toBe(0);
  });

  it('answers with the configured defaultReply once the script runs out', async () => {
    server = await startScriptedOpenAiServer({ defaultReply: { text: 'fallback' } });

    expect(await answer(post(server.url, { model: 'm', messages: [] }))).toBe('fallback');
  });

  it('lets a function reply answer from the conversation it received', async () => {
    server = await startScriptedOpenAiServer();
    server.script((request) => ({ text: `echo: ${request.messages?.at(-1)?.content}` }));

    const text = await answer(post(server.url, { model: 'm', messages: [{ role: 'tool', tool_call_id: 'c', content: '42' }] }));

    expect(text).toBe('echo: 42');
  });

  it('waits delayMs before answering', async () => {
    server = await startScriptedOpenAiServer();
    server.script({ text: 'late', delayMs: 150 });
    const started = Date.now();

    await (await post(server.url, { model: 'm', messages: [] })).json();

    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
  });

  it('closes even while a hanging request is open', async () => {
    server = await startScriptedOpenAiServer();
    server.script({ hang: true });
    const pending = post(server.url, { model: 'm', messages: [] }).catch((e: unknown) => e);
    await waitFor(() => server!.requests.length === 1);

    await server.close();
    server = undefined;

    // fetch's TypeError comes from another realm than jest's, so match by shape.
    expect(await pending).toMatchObject({ name: 'TypeError', message: 'fetch failed' });
  });

  it('answers 404 with an OpenAI-style error off the chat-completions route', async () => {
    server = await startScriptedOpenAiServer();

    const response = await fetch(`${server.url}/models`);

    expect(response.status).toBe(404);
    expect(await response.json()).toMatchObject({ error: { message: expect.stringContaining('no route') } });
  });
});

async function waitFor(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 5));
}
