import { Harness, OTHER_API_KEY, startHarness } from '../../../test/support/service-harness';

// RATE_LIMIT_PER_MINUTE through the whole service. The window is shortened to 3 s
// (RATE_LIMIT_WINDOW_MS, a test setting) so that "after the window" takes seconds.

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
    expect(refused.body).toEqual({ success: false, error: { code: 'RATE_LIMITED', message: expect.stringContaining('RATE_LIMIT_PER_MINUTE') } });
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
});
