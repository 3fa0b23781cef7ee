import type { TaskStreamEvent } from '@agentic-task-service/client';
import type { Harness } from '../../../test/support/service-harness';
import { API_KEY, startHarness, waitFor } from '../../../test/support/service-harness';

// Cost (docs/operations/model-providers.md "Prices and cost", docs/api.md "Limits and budgets")
// through the whole service: the scripted model names the model that answered and reports usage,
// MODEL_PRICES prices it, and the task, each usage event and each done carry what it cost.

// USD per million tokens. The answers name a dated id of it: the longest-prefix lookup finds it.
const MODEL_PRICES = JSON.stringify({ 'priced-model': { input: 2, output: 10, cacheRead: 0.5 } });
const PRICED = 'priced-model-20250101';

/** 600 uncached × 2 + 400 cache reads × 0.5 + 100 out × 10 per million: 0.0024 USD. */
const toolCallAnswer = {
  model: PRICED,
  toolCalls: [{ name: 'list_files', arguments: {} }],
  usage: { inputTokens: 1000, outputTokens: 100, cacheReadTokens: 400 },
};
/** 2,000 in × 2 + 50 out × 10 per million: 0.0045 USD. */
const textAnswer = { model: PRICED, text: 'Listed.', usage: { inputTokens: 2000, outputTokens: 50 } };

describe('Cost: costUsd from the price table, maxCostUsd on create and follow-up', () => {
  let h: Harness;
  beforeAll(async () => (h = await startHarness({ MODEL_PRICES, TASK_MAX_COST_USD: '100' })));
  afterAll(async () => h.close());

  const ats = () => h.client();
  const settled = (id: string, turn: number) =>
    waitFor(async () => {
      const view = await ats().tasks.get(id);
      return view.turn === turn && ['completed', 'failed', 'cancelled'].includes(view.status) ? view : undefined;
    });
  const eventsOf = async (id: string) => {
    const events: TaskStreamEvent[] = [];
    for await (const event of ats().tasks.stream(id)) events.push(event);
    return events;
  };

  it("prices each call by the model that answered, cache reads at their own rate, and sums them into the task's and the turn's usage", async () => {
    h.model.script(toolCallAnswer, textAnswer);
    const { id } = await ats().tasks.create({ message: 'list the files' });
    const task = await settled(id, 1);
    expect(task).toMatchObject({
      status: 'completed',
      maxCostUsd: 100,
      usage: { inputTokens: 3000, outputTokens: 150, totalTokens: 3150, cacheReadTokens: 400, cacheWriteTokens: 0, costUsd: 0.0069 },
    });
    const events = await eventsOf(id);
    const usages = events.flatMap((e) => (e.type === 'usage' ? [e.data] : []));
    expect(usages.map((u) => [u.model, u.costUsd])).toEqual([
      [PRICED, 0.0024],
      [PRICED, 0.0045],
    ]);
    expect(events.at(-1)).toMatchObject({ type: 'done', data: { status: 'completed', turn: 1, usage: task.usage } });
  });

  it('gives costUsd null for a model without a price, on the call, the turn and the task', async () => {
    h.model.script({ text: 'Hello.', usage: { inputTokens: 10, outputTokens: 2 } });
    const { id } = await ats().tasks.create({ message: 'say hello' });
    const task = await settled(id, 1);
    expect(task.usage).toMatchObject({ totalTokens: 12, costUsd: null });
    const events = await eventsOf(id);
    expect(events.find((e) => e.type === 'usage')).toMatchObject({ data: { model: 'scripted-model', costUsd: null } });
    expect(events.at(-1)).toMatchObject({ type: 'done', data: { usage: { totalTokens: 12, costUsd: null } } });
  });

  it('fails the turn before the model call that would start over the cost budget, and a follow-up raising it goes on', async () => {
    h.model.script(toolCallAnswer, toolCallAnswer, toolCallAnswer);
    const before = h.model.requests.length;
    const { id } = await ats().tasks.create({ message: 'list and list again', maxCostUsd: 0.004 });

    // 0.0024, then 0.0048: the third model call is never made.
    const failed = await settled(id, 1);
    expect(failed).toMatchObject({ status: 'failed', maxCostUsd: 0.004, usage: { costUsd: 0.0048 } });
    expect(failed.error).toMatch(/^Cost budget reached: the task's model calls have cost 0\.0048 USD of its 0\.004 USD \(maxCostUsd\)/);
    const events = await eventsOf(id);
    expect(events.at(-1)).toMatchObject({
      type: 'done',
      data: { status: 'failed', turn: 1, error: failed.error, usage: { costUsd: 0.0048 } },
    });
    // Give a stray call time to arrive: none may.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(h.model.requests.length - before).toBe(2);

    // A follow-up without a new budget fails at once, without calling the model.
    await ats().tasks.sendMessage(id, { message: 'go on' });
    expect((await settled(id, 2)).error).toMatch(/Cost budget reached/);
    expect(h.model.requests.length - before).toBe(2);

    // Raised: the turn goes on (the third scripted answer, then a text answer).
    h.model.script(textAnswer);
    await ats().tasks.sendMessage(id, { message: 'go on, with more', maxCostUsd: 1 });
    const completed = await settled(id, 3);
    expect(completed).toMatchObject({ status: 'completed', maxCostUsd: 1, usage: { costUsd: 0.0117 } });
    expect(h.model.requests.length - before).toBe(4);
  });

  it('refuses a maxCostUsd that is not a positive number, on create (JSON and multipart) and follow-up, and takes a decimal in a form', async () => {
    for (const maxCostUsd of [0, -1, 'lots']) {
      const res = await h.api('/api/v1/tasks', { method: 'POST', json: { message: 'x', maxCostUsd } });
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'VALIDATION_ERROR', message: expect.stringMatching(/maxCostUsd/) });
    }
    const form = new FormData();
    form.append('message', 'from a form');
    form.append('maxCostUsd', '2.5');
    const created = await fetch(`${h.url}/api/v1/tasks`, { method: 'POST', body: form, headers: { authorization: `Bearer ${API_KEY}` } });
    expect(created.status).toBe(201);
    const id = ((await created.json()) as { data: { id: string } }).data.id;
    expect((await ats().tasks.get(id)).maxCostUsd).toBe(2.5);
    const bad = new FormData();
    bad.append('message', 'x');
    bad.append('maxCostUsd', '1e3');
    const refused = await fetch(`${h.url}/api/v1/tasks`, { method: 'POST', body: bad, headers: { authorization: `Bearer ${API_KEY}` } });
    expect(refused.status).toBe(400);
    await settled(id, 1);
    const followUp = await h.api(`/api/v1/tasks/${id}/messages`, { method: 'POST', json: { message: 'x', maxCostUsd: 0 } });
    expect(followUp.status).toBe(400);
    expect(followUp.body.error).toMatchObject({ code: 'VALIDATION_ERROR', message: expect.stringMatching(/maxCostUsd/) });
  });
});
