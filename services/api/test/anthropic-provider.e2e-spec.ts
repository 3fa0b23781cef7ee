import type { AtsClient, TaskStreamEvent } from '@agentic-task-service/client';
import type { ScriptedAnthropicServer } from '@app/model-provider/testing/scripted-anthropic-server';
import { startScriptedAnthropicServer } from '@app/model-provider/testing/scripted-anthropic-server';
import type { Harness } from '../../../test/support/service-harness';
import { startHarness, waitFor } from '../../../test/support/service-harness';

// LLM_PROVIDER=anthropic end to end: the service talks to a local server speaking the Messages API
// (docs/operations/model-providers.md), in the all-in-one mode and, through the e2e-distributed
// project, in the distributed one.

const ANTHROPIC_KEY = 'sk-ant-e2e-SECRET-0123456789';

/** Every event of the task's history, until the `done` of its latest turn. */
const history = async (ats: AtsClient, id: string): Promise<TaskStreamEvent[]> => {
  const events: TaskStreamEvent[] = [];
  for await (const event of ats.tasks.stream(id, { after: 0 })) events.push(event);
  return events;
};

const dataOf = <T extends TaskStreamEvent['type']>(events: TaskStreamEvent[], type: T) =>
  events.flatMap((e) => (e.type === type ? [e.data as Extract<TaskStreamEvent, { type: T }>['data']] : []));

const approveAll = async (ats: AtsClient, id: string, count: number): Promise<string[]> => {
  const pending = await waitFor(
    async () => {
      const view = await ats.tasks.get(id);
      return view.pendingApprovals.length === count ? view.pendingApprovals : undefined;
    },
    20_000,
    `${count} pending approvals`,
  );
  for (const { callId } of pending) await ats.tasks.approve(id, callId, 'proceed_once');
  return pending.map((p) => p.callId);
};

describe('LLM_PROVIDER=anthropic', () => {
  let anthropic: ScriptedAnthropicServer;
  let h: Harness;
  let ats: AtsClient;
  beforeAll(async () => {
    anthropic = await startScriptedAnthropicServer();
    h = await startHarness({
      LLM_PROVIDER: 'anthropic',
      LLM_BASE_URL: anthropic.url,
      LLM_API_KEY: ANTHROPIC_KEY,
      LLM_MODEL: 'claude-sonnet-4-5-20250929',
      LLM_MAX_TOKENS: '4096',
    });
    ats = h.client();
  });
  afterAll(async () => {
    await h?.close();
    await anthropic?.close();
  });

  it('runs two tool calls of one answer after approval, then a follow-up, counting cache tokens in the task and each done', async () => {
    anthropic.script(
      {
        text: 'Writing both.',
        toolUses: [
          { id: 'toolu_a', name: 'write_file', input: { path: 'downloads/a.md', content: 'alpha' } },
          { id: 'toolu_b', name: 'write_file', input: { path: 'downloads/b.md', content: 'beta' } },
        ],
        usage: { inputTokens: 50, outputTokens: 20, cacheWriteTokens: 1000 },
      },
      { text: 'Both written.', usage: { inputTokens: 30, outputTokens: 10, cacheReadTokens: 1000 } },
      {
        toolUses: [{ id: 'toolu_c', name: 'read_file', input: { path: 'downloads/a.md' } }],
        usage: { inputTokens: 40, outputTokens: 15, cacheReadTokens: 1000 },
      },
      { text: 'It says alpha.', usage: { inputTokens: 20, outputTokens: 5, cacheReadTokens: 1000 } },
    );

    const { id } = await ats.tasks.create({ message: 'Write a.md and b.md', autoExecute: false });
    const [first, second] = await approveAll(ats, id, 2);
    const turn1 = await history(ats, id);
    expect(dataOf(turn1, 'tool_call').map((c) => [c.toolName, c.status])).toEqual([
      ['write_file', 'awaiting_approval'],
      ['write_file', 'awaiting_approval'],
    ]);
    expect(Object.fromEntries(dataOf(turn1, 'tool_result').map((r) => [r.callId, r.status]))).toEqual({
      [first]: 'success',
      [second]: 'success',
    });
    expect(dataOf(turn1, 'usage')[0]).toEqual({
      inputTokens: 1050,
      outputTokens: 20,
      totalTokens: 1070,
      cacheReadTokens: 0,
      cacheWriteTokens: 1000,
      // The built-in list price of claude-sonnet-4-5 (the dated id's longest prefix): 50 × 3 + 1,000
      // cache writes × 3.75 + 20 out × 15 per million.
      costUsd: 0.0042,
      turn: 1,
      step: 1,
      model: 'claude-sonnet-4-5-20250929',
    });
    expect(turn1.at(-1)).toEqual({
      type: 'done',
      id: expect.any(Number),
      data: {
        status: 'completed',
        turn: 1,
        usage: { inputTokens: 2080, outputTokens: 30, totalTokens: 2110, cacheReadTokens: 1000, cacheWriteTokens: 1000, costUsd: 0.00474 },
      },
    });

    // The results of one answer's two calls went back as ONE user message of tool_result blocks,
    // under the ids the service gave the calls (the conversation is rebuilt from the task's events).
    expect(anthropic.requests[1].messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'Write a.md and b.md' }] },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Writing both.' },
          { type: 'tool_use', id: first, name: 'write_file', input: { path: 'downloads/a.md', content: 'alpha' } },
          { type: 'tool_use', id: second, name: 'write_file', input: { path: 'downloads/b.md', content: 'beta' } },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: first, content: expect.any(String) },
          { type: 'tool_result', tool_use_id: second, content: expect.any(String) },
        ],
      },
    ]);

    await ats.tasks.sendMessage(id, { message: 'What does a.md say?' });
    const [third] = await approveAll(ats, id, 1);
    const all = await waitFor(
      async () => {
        const events = await history(ats, id);
        return dataOf(events, 'done').length === 2 ? events : undefined;
      },
      20_000,
      'the second turn to end',
    );
    expect(dataOf(all, 'content').map((c) => c.text)).toEqual(['Writing both.', 'Both written.', 'It says alpha.']);
    expect(dataOf(all, 'done')[1]).toEqual({
      status: 'completed',
      turn: 2,
      usage: { inputTokens: 2060, outputTokens: 20, totalTokens: 2080, cacheReadTokens: 2000, cacheWriteTokens: 0, costUsd: 0.00108 },
    });
    expect((await ats.tasks.get(id)).usage).toEqual({
      inputTokens: 4140,
      outputTokens: 50,
      totalTokens: 4190,
      cacheReadTokens: 3000,
      cacheWriteTokens: 1000,
      costUsd: 0.00582,
    });

    // Every request: the key, the version, the model, LLM_MAX_TOKENS, the cache breakpoints.
    expect(anthropic.requests).toHaveLength(4);
    for (const [i, request] of anthropic.requests.entries()) {
      expect(anthropic.headers[i]).toMatchObject({ 'x-api-key': ANTHROPIC_KEY, 'anthropic-version': '2023-06-01' });
      expect(request).toMatchObject({ model: 'claude-sonnet-4-5-20250929', max_tokens: 4096, stream: true });
      expect(request.system).toEqual([{ type: 'text', text: expect.any(String), cache_control: { type: 'ephemeral' } }]);
      expect(request.tools!.at(-1)).toMatchObject({ cache_control: { type: 'ephemeral' } });
      expect(request.tools!.slice(0, -1).every((tool) => tool.cache_control === undefined)).toBe(true);
      expect(request.messages!.map((m) => m.role)).toEqual(request.messages!.map((_m, j) => (j % 2 === 0 ? 'user' : 'assistant')));
    }
    expect(anthropic.requests[3].messages!.at(-1)).toEqual({
      role: 'user',
      content: [{ type: 'tool_result', tool_use_id: third, content: expect.stringContaining('alpha') }],
    });
  });

  it('fails the turn with the Anthropic error, the key redacted, after retrying an overload', async () => {
    anthropic.script(
      { status: 529, retryAfter: 0 },
      { status: 401, body: { type: 'error', error: { type: 'authentication_error', message: `invalid x-api-key ${ANTHROPIC_KEY}` } } },
    );
    const before = anthropic.requests.length;
    const { id } = await ats.tasks.create({ message: 'hello' });
    const events = await history(ats, id);
    expect(anthropic.requests.length - before).toBe(2);
    const done = dataOf(events, 'done')[0];
    expect(done).toMatchObject({ status: 'failed', turn: 1 });
    expect(done.error).toContain('HTTP 401');
    expect(done.error).toContain('invalid x-api-key [REDACTED]');
    expect(JSON.stringify(events)).not.toContain(ANTHROPIC_KEY);
    expect((await ats.tasks.get(id)).error).not.toContain(ANTHROPIC_KEY);
  });
});
