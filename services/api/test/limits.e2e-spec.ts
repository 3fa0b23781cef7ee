import { API_KEY, Harness, OTHER_API_KEY, startHarness, waitFor } from '../../../test/support/service-harness';
import { followStream } from '../../../test/support/sse-client';

// Budgets and limits (CONTRACT.md) through the whole service. The rate limit's window is
// shortened to 3 s (RATE_LIMIT_WINDOW_MS, a test setting) so that "after the window" takes seconds.

const LIMIT = 3;

describe('Rate limit: creates and follow-ups per tenant (RATE_LIMIT_PER_MINUTE)', () => {
  let h: Harness;
  beforeAll(async () => (h = await startHarness({ RATE_LIMIT_PER_MINUTE: String(LIMIT), RATE_LIMIT_WINDOW_MS: '3000' })));
  afterAll(async () => h.close());

  const create = (key?: string) => h.api('/api/v1/tasks', { method: 'POST', json: { message: 'hello' }, ...(key ? { key } : {}) });
  const followUp = (id: string) => h.api(`/api/v1/tasks/${id}/messages`, { method: 'POST', json: { message: 'and again' } });
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

  it('admits the limit, refuses the next create or follow-up with 429 RATE_LIMITED and Retry-After, leaves other tenants and routes alone, and admits again after the window', async () => {
    const first = await create();
    expect(first.status).toBe(201);
    const id = first.body.data.id as string;
    expect((await create()).status).toBe(201);
    // A follow-up counts like a create.
    expect((await followUp(id)).status).toBe(201);

    const refused = await create();
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({
      success: false,
      error: { code: 'RATE_LIMITED', message: expect.stringContaining('RATE_LIMIT_PER_MINUTE') },
    });
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(Number.isInteger(retryAfter)).toBe(true);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(4);
    const refusedFollowUp = await followUp(id);
    expect(refusedFollowUp.status).toBe(429);
    expect(refusedFollowUp.body.error.code).toBe('RATE_LIMITED');
    expect(refusedFollowUp.headers.get('retry-after')).toMatch(/^[1-4]$/);

    // Another tenant has a window of its own; reads are not limited.
    expect((await create(OTHER_API_KEY)).status).toBe(201);
    expect((await h.api(`/api/v1/tasks/${id}`)).status).toBe(200);
    expect((await h.api('/api/v1/tasks')).status).toBe(200);

    await sleep(retryAfter * 1000);
    expect((await create()).status).toBe(201);
  });

  it('counts a request that fails validation, but not one it refused', async () => {
    await sleep(3_200); // a fresh window
    expect((await h.api('/api/v1/tasks', { method: 'POST', json: { message: '' } })).status).toBe(400);
    expect((await create()).status).toBe(201);
    expect((await create()).status).toBe(201);
    expect((await create()).status).toBe(429);
    expect((await create()).status).toBe(429);
    // Only the three admitted requests are in the window: it frees up when they leave it.
    const wait = Number((await create()).headers.get('retry-after'));
    await sleep(wait * 1000);
    expect((await create()).status).toBe(201);
  });

  it('answers an unauthenticated create 401, not 429: nobody to count it against', async () => {
    expect((await h.api('/api/v1/tasks', { method: 'POST', json: { message: 'x' }, key: null })).status).toBe(401);
  });

  it('documents the 429 with Retry-After on create and follow-up, and maxTokens on both bodies, in the OpenAPI document', async () => {
    const doc = (await h.api('/api/docs-json', { key: null })).body;
    // Error answers are shared components: `{$ref: '#/components/responses/<name>'}`.
    const resolve = (response: { $ref?: string }) => (response.$ref ? doc.components.responses[response.$ref.split('/').pop()!] : response);
    for (const operation of [doc.paths['/api/v1/tasks'].post, doc.paths['/api/v1/tasks/{id}/messages'].post]) {
      expect(resolve(operation.responses['429']).description).toContain('RATE_LIMITED');
      expect(resolve(operation.responses['429']).headers['Retry-After'].schema).toMatchObject({ type: 'integer' });
    }
    expect(doc.components.schemas.CreateTaskRequestDto.properties.maxTokens).toMatchObject({ type: 'integer', minimum: 1 });
    expect(doc.components.schemas.SendFollowUpRequestDto.properties.maxTokens).toMatchObject({ type: 'integer', minimum: 1 });
    expect(doc.paths['/api/v1/tasks/{id}/cancel'].post.responses['429']).toBeUndefined();
  });
});

describe('Token budget: maxTokens on create and follow-up, TASK_MAX_TOKENS for tasks without one', () => {
  let h: Harness;
  beforeAll(async () => (h = await startHarness({ TASK_MAX_TOKENS: '50' })));
  afterAll(async () => h.close());

  const usage = (totalTokens: number) => ({ inputTokens: totalTokens - 1, outputTokens: 1, totalTokens });
  const listFiles = (totalTokens: number) => ({ toolCalls: [{ name: 'list_files', arguments: {} }], usage: usage(totalTokens) });
  const task = async (id: string) => (await h.api(`/api/v1/tasks/${id}`)).body.data;
  const settled = (id: string, turn: number) =>
    waitFor(async () => {
      const view = await task(id);
      return view.turn === turn && ['completed', 'failed', 'cancelled'].includes(view.status) ? view : undefined;
    });

  it('fails the turn before the model call that would start over the budget, and a follow-up with a higher maxTokens goes on', async () => {
    h.model.script(listFiles(60), listFiles(50));
    const before = h.model.requests.length;
    const created = await h.api('/api/v1/tasks', { method: 'POST', json: { message: 'list and list again', maxTokens: 100 } });
    expect(created.status).toBe(201);
    const id = created.body.data.id as string;

    // 60 tokens, then 110: the third model call is never made.
    const failed = await settled(id, 1);
    expect(failed).toMatchObject({ status: 'failed', usage: { totalTokens: 110 }, maxTokens: 100 });
    expect(failed.error).toMatch(/^Token budget reached: the task has used 110 of its 100 tokens \(maxTokens\)/);
    expect(h.model.requests.length - before).toBe(2);
    const done = (await followStream(`${h.url}/api/v1/tasks/${id}/stream`, API_KEY)).at(-1)!;
    expect(done.payload.data).toMatchObject({ status: 'failed', turn: 1, error: failed.error });

    // A follow-up that does not raise it: the turn fails at once, without calling the model.
    expect((await h.api(`/api/v1/tasks/${id}/messages`, { method: 'POST', json: { message: 'go on' } })).status).toBe(201);
    const again = await settled(id, 2);
    expect(again).toMatchObject({ status: 'failed', usage: { totalTokens: 110 }, maxTokens: 100 });
    expect(again.error).toMatch(/Token budget reached/);
    expect(h.model.requests.length - before).toBe(2);

    // Raised: the task goes on in the same context.
    h.model.script({ text: 'Listed twice.', usage: usage(30) });
    const raised = await h.api(`/api/v1/tasks/${id}/messages`, { method: 'POST', json: { message: 'go on, with more', maxTokens: 1000 } });
    expect(raised.status).toBe(201);
    const completed = await settled(id, 3);
    expect(completed).toMatchObject({ status: 'completed', usage: { totalTokens: 140 }, maxTokens: 1000 });
    expect(completed.error).toBeUndefined();
    expect(h.model.requests.length - before).toBe(3);
  });

  it('gives a task created without maxTokens the TASK_MAX_TOKENS budget, and one created with it its own', async () => {
    h.model.script(listFiles(70));
    const id = (await h.api('/api/v1/tasks', { method: 'POST', json: { message: 'default budget' } })).body.data.id;
    const view = await settled(id, 1);
    expect(view).toMatchObject({ status: 'failed', maxTokens: 50, usage: { totalTokens: 70 } });
    expect(view.error).toMatch(/used 70 of its 50 tokens/);

    const own = (await h.api('/api/v1/tasks', { method: 'POST', json: { message: 'own budget', maxTokens: 5000 } })).body.data.id;
    expect(await settled(own, 1)).toMatchObject({ status: 'completed', maxTokens: 5000 });
  });

  it('takes maxTokens as a multipart text field, and refuses a bad one on create and follow-up', async () => {
    const form = new FormData();
    form.append('message', 'from a form');
    form.append('maxTokens', '777');
    const res = await fetch(`${h.url}/api/v1/tasks`, { method: 'POST', body: form, headers: { authorization: `Bearer ${API_KEY}` } });
    expect(res.status).toBe(201);
    const id = ((await res.json()) as { data: { id: string } }).data.id;
    expect((await task(id)).maxTokens).toBe(777);

    const bad = new FormData();
    bad.append('message', 'x');
    bad.append('maxTokens', '1e3');
    const refused = await fetch(`${h.url}/api/v1/tasks`, { method: 'POST', body: bad, headers: { authorization: `Bearer ${API_KEY}` } });
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { error: { message: string } }).error.message).toMatch(/maxTokens/);
    expect((await h.api('/api/v1/tasks', { method: 'POST', json: { message: 'x', maxTokens: 0 } })).body.error).toMatchObject({
      code: 'VALIDATION_ERROR',
      message: expect.stringMatching(/maxTokens/),
    });
    const follow = await h.api(`/api/v1/tasks/${id}/messages`, { method: 'POST', json: { message: 'x', maxTokens: -5 } });
    expect(follow.status).toBe(400);
  });
});

describe('Running turns per tenant (MAX_RUNNING_TASKS_PER_TENANT=1)', () => {
  let h: Harness;
  beforeAll(async () => (h = await startHarness({ MAX_RUNNING_TASKS_PER_TENANT: '1' })));
  afterAll(async () => h.close());

  /** Which user message each model call answered, in the order the calls arrived. */
  let answered: string[] = [];
  const slowly = (ms: number) => (body: { messages?: Array<Record<string, any>> }) => {
    answered.push(String(body.messages?.filter((m) => m.role === 'user').at(-1)?.content));
    return { text: 'done', delayMs: ms };
  };
  beforeEach(() => (answered = []));

  const create = async (message: string, key?: string) => {
    const res = await h.api('/api/v1/tasks', { method: 'POST', json: { message }, ...(key ? { key } : {}) });
    expect(res.status).toBe(201);
    return res.body.data.id as string;
  };
  const task = async (id: string, key?: string) => (await h.api(`/api/v1/tasks/${id}`, key ? { key } : {})).body.data;
  const statusOf = async (id: string) => (await task(id)).status as string;
  const until = (id: string, status: string) =>
    waitFor(async () => ((await statusOf(id)) === status ? true : undefined), 15_000, `${id} ${status}`);
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

  it('keeps a second task pending while the first runs, then runs it once the first completes', async () => {
    h.model.script(slowly(1_500), slowly(200));
    const first = await create('first');
    await until(first, 'running');
    const second = await create('second');
    await sleep(600);
    expect(await statusOf(first)).toBe('running');
    expect(await statusOf(second)).toBe('pending');
    expect(answered).toEqual(['first']);

    await until(first, 'completed');
    await until(second, 'completed');
    expect(answered).toEqual(['first', 'second']);
  });

  it('starts waiting turns in the order they were asked for, follow-ups included, and leaves other tenants alone', async () => {
    h.model.script(slowly(10));
    const z = await create('z');
    await until(z, 'completed');
    h.model.script(slowly(1_000));
    const a = await create('a');
    await until(a, 'running');
    const b = await create('b');
    const c = await create('c');
    // A follow-up to a finished task waits in line like a new task; one to a waiting task waits
    // behind its own first turn.
    const zAgain = await h.api(`/api/v1/tasks/${z}/messages`, { method: 'POST', json: { message: 'z again' } });
    expect(zAgain.status).toBe(201);
    expect(zAgain.body.data.status).toBe('pending');
    expect((await h.api(`/api/v1/tasks/${b}/messages`, { method: 'POST', json: { message: 'b again' } })).body.data.status).toBe('pending');
    // The stream of the waiting task begins at the follow-up and follows the turn it waits for.
    const zStream = followStream(`${h.url}/api/v1/tasks/${z}/stream`, API_KEY, { timeoutMs: 20_000 });
    // Another tenant has slots of its own.
    h.model.script(slowly(100));
    const other = await create('other tenant', OTHER_API_KEY);
    await waitFor(async () => ((await task(other, OTHER_API_KEY)).status === 'completed' ? true : undefined), 15_000, 'the other tenant');
    expect(await statusOf(b)).toBe('pending');
    expect(await statusOf(c)).toBe('pending');

    h.model.script(slowly(300), slowly(300), slowly(300), slowly(300));
    await waitFor(async () => ((await task(b)).turn === 2 && (await statusOf(b)) === 'completed' ? true : undefined), 15_000, 'b turn 2');
    expect(answered).toEqual(['z', 'a', 'other tenant', 'b', 'c', 'z again', 'b again']);
    const events = await zStream;
    expect(events.map((e) => e.kind)).toEqual(['message', 'status', 'usage', 'content', 'done']);
    expect(events[0].payload.data).toMatchObject({ text: 'z again', queued: true });
    expect(events.at(-1)!.payload.data).toMatchObject({ status: 'completed', turn: 2 });
  });

  it('frees the place of a waiting task that is cancelled', async () => {
    h.model.script(slowly(1_000), slowly(100));
    const first = await create('first');
    await until(first, 'running');
    const cancelled = await create('never runs');
    const third = await create('third');
    expect((await h.api(`/api/v1/tasks/${cancelled}/cancel`, { method: 'POST' })).body.data.status).toBe('cancelled');
    await until(third, 'completed');
    expect(answered).toEqual(['first', 'third']);
  });
});
