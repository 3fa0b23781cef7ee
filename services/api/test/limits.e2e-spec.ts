import type { TaskStreamEvent } from '@agentic-task-service/client';
import { AtsError } from '@agentic-task-service/client';
import type { Harness } from '../../../test/support/service-harness';
import { API_KEY, OTHER_API_KEY, startHarness, waitFor } from '../../../test/support/service-harness';

// Budgets and limits (docs/api.md "Limits and budgets") through the whole service, driven by the typed client. The
// rate limit's window is shortened to 3 s (RATE_LIMIT_WINDOW_MS, a test setting) so that "after
// the window" takes seconds. Raw HTTP stays for a request without credentials, the OpenAPI
// document, and multipart forms the client does not send (text fields only, a malformed number).

const LIMIT = 3;

describe('Rate limit: creates and follow-ups per tenant (RATE_LIMIT_PER_MINUTE)', () => {
  let h: Harness;
  beforeAll(async () => (h = await startHarness({ RATE_LIMIT_PER_MINUTE: String(LIMIT), RATE_LIMIT_WINDOW_MS: '3000' })));
  afterAll(async () => h.close());

  const create = (key?: string) => h.client(key).tasks.create({ message: 'hello' });
  const followUp = (id: string) => h.client().tasks.sendMessage(id, { message: 'and again' });
  /** The AtsError a refused call threw (fails if the call succeeded). */
  const refusal = (call: Promise<unknown>): Promise<AtsError> =>
    call.then(
      () => {
        throw new Error('expected the call to be refused');
      },
      (error: unknown) => {
        expect(error).toBeInstanceOf(AtsError);
        return error as AtsError;
      },
    );
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

  it('admits the limit, refuses the next create or follow-up with 429 RATE_LIMITED and Retry-After, leaves other tenants and routes alone, and admits again after the window', async () => {
    const { id } = await create();
    await create();
    // A follow-up counts like a create.
    await followUp(id);

    const refused = await refusal(create());
    expect(refused).toMatchObject({ code: 'RATE_LIMITED', status: 429, message: expect.stringContaining('RATE_LIMIT_PER_MINUTE') });
    // retryAfterSeconds is the Retry-After header read as a number.
    const retryAfter = refused.retryAfterSeconds!;
    expect(Number.isInteger(retryAfter)).toBe(true);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(4);
    const refusedFollowUp = await refusal(followUp(id));
    expect(refusedFollowUp).toMatchObject({ code: 'RATE_LIMITED', status: 429 });
    expect([1, 2, 3, 4]).toContain(refusedFollowUp.retryAfterSeconds);

    // Another tenant has a window of its own; reads are not limited.
    await create(OTHER_API_KEY);
    expect((await h.client().tasks.get(id)).id).toBe(id);
    expect((await h.client().tasks.listPage()).tasks.map((t) => t.id)).toContain(id);

    await sleep(retryAfter * 1000);
    await create();
  });

  it('counts a request that fails validation, but not one it refused', async () => {
    await sleep(3_200); // a fresh window
    await expect(h.client().tasks.create({ message: '' })).rejects.toMatchObject({ code: 'VALIDATION_ERROR', status: 400 });
    await create();
    await create();
    await expect(create()).rejects.toMatchObject({ code: 'RATE_LIMITED', status: 429 });
    await expect(create()).rejects.toMatchObject({ code: 'RATE_LIMITED', status: 429 });
    // Only the three admitted requests are in the window: it frees up when they leave it.
    const wait = (await refusal(create())).retryAfterSeconds!;
    await sleep(wait * 1000);
    await create();
  });

  it('answers an unauthenticated create 401, not 429: nobody to count it against', async () => {
    // No Authorization header at all: a request the client, which always sends its key, cannot make.
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
  const ats = () => h.client();
  const task = (id: string) => ats().tasks.get(id);
  const settled = (id: string, turn: number) =>
    waitFor(async () => {
      const view = await task(id);
      return view.turn === turn && ['completed', 'failed', 'cancelled'].includes(view.status) ? view : undefined;
    });

  it('fails the turn before the model call that would start over the budget, and a follow-up with a higher maxTokens goes on', async () => {
    h.model.script(listFiles(60), listFiles(50));
    const before = h.model.requests.length;
    const { id } = await ats().tasks.create({ message: 'list and list again', maxTokens: 100 });

    // 60 tokens, then 110: the third model call is never made.
    const failed = await settled(id, 1);
    expect(failed).toMatchObject({ status: 'failed', usage: { totalTokens: 110 }, maxTokens: 100 });
    expect(failed.error).toMatch(/^Token budget reached: the task has used 110 of its 100 tokens \(maxTokens\)/);
    expect(h.model.requests.length - before).toBe(2);
    const events: TaskStreamEvent[] = [];
    for await (const event of ats().tasks.stream(id)) events.push(event);
    expect(events.at(-1)).toMatchObject({ type: 'done', data: { status: 'failed', turn: 1, error: failed.error } });

    // A follow-up that does not raise it: the turn fails at once, without calling the model.
    await ats().tasks.sendMessage(id, { message: 'go on' });
    const again = await settled(id, 2);
    expect(again).toMatchObject({ status: 'failed', usage: { totalTokens: 110 }, maxTokens: 100 });
    expect(again.error).toMatch(/Token budget reached/);
    expect(h.model.requests.length - before).toBe(2);

    // Raised: the task goes on in the same context.
    h.model.script({ text: 'Listed twice.', usage: usage(30) });
    await ats().tasks.sendMessage(id, { message: 'go on, with more', maxTokens: 1000 });
    const completed = await settled(id, 3);
    expect(completed).toMatchObject({ status: 'completed', usage: { totalTokens: 140 }, maxTokens: 1000 });
    expect(completed.error).toBeUndefined();
    expect(h.model.requests.length - before).toBe(3);
  });

  it('gives a task created without maxTokens the TASK_MAX_TOKENS budget, and one created with it its own', async () => {
    h.model.script(listFiles(70));
    const { id } = await ats().tasks.create({ message: 'default budget' });
    const view = await settled(id, 1);
    expect(view).toMatchObject({ status: 'failed', maxTokens: 50, usage: { totalTokens: 70 } });
    expect(view.error).toMatch(/used 70 of its 50 tokens/);

    const { id: own } = await ats().tasks.create({ message: 'own budget', maxTokens: 5000 });
    expect(await settled(own, 1)).toMatchObject({ status: 'completed', maxTokens: 5000 });
  });

  it('takes maxTokens as a multipart text field, and refuses a bad one on create and follow-up', async () => {
    // Raw forms: the client sends multipart only with files, and cannot write a malformed number.
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
    await expect(ats().tasks.create({ message: 'x', maxTokens: 0 })).rejects.toMatchObject({
      code: 'VALIDATION_ERROR',
      message: expect.stringMatching(/maxTokens/),
    });
    await expect(ats().tasks.sendMessage(id, { message: 'x', maxTokens: -5 })).rejects.toMatchObject({ status: 400 });
  });
});

describe("Token budget cap: TASK_MAX_TOKENS_CAP, the operator's bound on any maxTokens", () => {
  let h: Harness;
  beforeAll(async () => (h = await startHarness({ TASK_MAX_TOKENS_CAP: '1000' })));
  afterAll(async () => h.close());

  const ats = () => h.client();
  const overTheCap = { code: 'VALIDATION_ERROR', status: 400, message: expect.stringMatching(/at most 1000.*TASK_MAX_TOKENS_CAP/) };

  it('refuses a create or follow-up asking for more than the cap, admits the cap itself, and gives a task without maxTokens the cap', async () => {
    await expect(ats().tasks.create({ message: 'too much', maxTokens: 1001 })).rejects.toMatchObject(overTheCap);

    const { id } = await ats().tasks.create({ message: 'all it may', maxTokens: 1000 });
    expect((await ats().tasks.get(id)).maxTokens).toBe(1000);
    await expect(ats().tasks.sendMessage(id, { message: 'more', maxTokens: 5000 })).rejects.toMatchObject(overTheCap);
    expect((await ats().tasks.get(id)).maxTokens).toBe(1000);

    // No TASK_MAX_TOKENS: unlimited would be more than the cap allows.
    const { id: unset } = await ats().tasks.create({ message: 'no budget asked' });
    expect((await ats().tasks.get(unset)).maxTokens).toBe(1000);
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

  const create = async (message: string, key?: string) => (await h.client(key).tasks.create({ message })).id;
  const task = (id: string, key?: string) => h.client(key).tasks.get(id);
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
    expect((await h.client().tasks.sendMessage(z, { message: 'z again' })).status).toBe('pending');
    expect((await h.client().tasks.sendMessage(b, { message: 'b again' })).status).toBe('pending');
    // The stream of the waiting task begins at the follow-up and follows the turn it waits for.
    const zStream = (async () => {
      const events: TaskStreamEvent[] = [];
      for await (const event of h.client().tasks.stream(z)) events.push(event);
      return events;
    })();
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
    expect(events.map((e) => e.type)).toEqual(['message', 'status', 'usage', 'content', 'done']);
    expect(events[0].data).toMatchObject({ text: 'z again', queued: true });
    expect(events.at(-1)!.data).toMatchObject({ status: 'completed', turn: 2 });
  });

  it("an interrupting follow-up's turn takes the interrupted turn's slot at once, and the task waiting behind still waits", async () => {
    h.model.script(slowly(1_500), slowly(1_000), slowly(100));
    const first = await create('first');
    await until(first, 'running');
    const second = await create('second');
    const interrupted = await h.client().tasks.sendMessage(first, { message: 'first, instead', ifRunning: 'interrupt' });
    expect(interrupted.status).toBe('running');
    await sleep(300);
    expect(await statusOf(second)).toBe('pending');
    await until(first, 'completed');
    await until(second, 'completed');
    expect(answered).toEqual(['first', 'first, instead', 'second']);
  });

  it('frees the place of a waiting task that is cancelled', async () => {
    h.model.script(slowly(1_000), slowly(100));
    const first = await create('first');
    await until(first, 'running');
    const cancelled = await create('never runs');
    const third = await create('third');
    expect((await h.client().tasks.cancel(cancelled)).status).toBe('cancelled');
    await until(third, 'completed');
    expect(answered).toEqual(['first', 'third']);
  });
});
