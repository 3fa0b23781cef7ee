import type { Harness } from '../../../test/support/service-harness';
import { API_KEY, OTHER_API_KEY, startHarness } from '../../../test/support/service-harness';

describe('API: auth, validation and the error envelope', () => {
  let h: Harness;
  beforeAll(async () => (h = await startHarness()));
  afterAll(async () => h.close());

  it('answers /healthz without auth', async () => {
    const res = await h.api('/healthz', { key: null });
    expect(res).toMatchObject({ status: 200, body: { status: 'ok' } });
  });

  it('rejects a request without Authorization as AUTH_REQUIRED 401', async () => {
    const res = await h.api('/api/v1/tasks', { key: null });
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ success: false, error: { code: 'AUTH_REQUIRED', message: expect.any(String) } });
  });

  it('rejects a non-Bearer Authorization as AUTH_REQUIRED', async () => {
    const res = await h.api('/api/v1/tasks', { key: null, headers: { authorization: 'Basic dXNlcjpwYXNz' } });
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe('AUTH_REQUIRED');
  });

  it('rejects an unknown key as INVALID_API_KEY 401', async () => {
    const res = await h.api('/api/v1/tasks', { key: 'not-a-key' });
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe('INVALID_API_KEY');
  });

  it.each([
    [{}, 'message'],
    [{ message: '' }, 'message'],
    [{ message: ' \n\t ' }, 'message must be a non-empty string'],
    [{ message: 42 }, 'message'],
    [{ message: 'x', autoExecute: 'yes' }, 'autoExecute'],
    [{ message: 'x', showInHistory: 1 }, 'showInHistory'],
    [{ message: 'x', secrets: { TOKEN: 'abc' } }, 'secrets'],
    [{ message: 'x', secrets: { '1BAD': 'abcdef' } }, 'secrets'],
    [{ message: 'x', env: { A: 1 } }, 'env'],
    [{ message: 'x', env: ['A'] }, 'env'],
    [{ message: 'x', surprise: true }, 'surprise'],
  ])('rejects create body %j with VALIDATION_ERROR naming %s', async (body, field) => {
    const res = await h.api('/api/v1/tasks', { method: 'POST', json: body });
    expect(res.status).toBe(400);
    expect(res.body.success).toBe(false);
    expect(res.body.error.code).toBe('VALIDATION_ERROR');
    expect(res.body.error.message).toContain(field);
  });

  it('rejects malformed JSON with VALIDATION_ERROR', async () => {
    const res = await h.api('/api/v1/tasks', { method: 'POST', body: '{"message": ', headers: { 'content-type': 'application/json' } });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('VALIDATION_ERROR');
  });

  it('answers an unknown task with NOT_FOUND 404 on every task route', async () => {
    const id = 'task_00000000000000000000000000000000';
    for (const [method, path, json] of [
      ['GET', `/api/v1/tasks/${id}`, undefined],
      ['GET', `/api/v1/tasks/${id}/stream`, undefined],
      ['GET', `/api/v1/tasks/${id}/artifacts`, undefined],
      ['POST', `/api/v1/tasks/${id}/messages`, { message: 'hi' }],
      ['POST', `/api/v1/tasks/${id}/cancel`, undefined],
      ['POST', `/api/v1/tasks/${id}/tools/call_x/approve`, { outcome: 'proceed_once' }],
    ] as const) {
      const res = await h.api(path, { method, json });
      expect({ path, status: res.status, code: res.body.error?.code }).toEqual({ path, status: 404, code: 'NOT_FOUND' });
    }
  });

  it("hides one tenant's task from another tenant as NOT_FOUND", async () => {
    const created = await h.api('/api/v1/tasks', { method: 'POST', json: { message: 'private' } });
    const id = created.body.data.id;
    for (const path of [`/api/v1/tasks/${id}`, `/api/v1/tasks/${id}/stream`, `/api/v1/tasks/${id}/artifacts`]) {
      const res = await h.api(path, { key: OTHER_API_KEY });
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe('NOT_FOUND');
    }
    const list = await h.api('/api/v1/tasks', { key: OTHER_API_KEY });
    expect(list.body.data.tasks.map((t: { id: string }) => t.id)).not.toContain(id);
    const own = await h.api('/api/v1/tasks', { key: API_KEY });
    expect(own.body.data.tasks.map((t: { id: string }) => t.id)).toContain(id);
  });

  it('rejects bad list parameters with VALIDATION_ERROR', async () => {
    for (const q of ['limit=0', 'limit=101', 'limit=abc', 'cursor=xyz', 'includeHidden=maybe']) {
      const res = await h.api(`/api/v1/tasks?${q}`);
      expect({ q, status: res.status, code: res.body.error?.code }).toEqual({ q, status: 400, code: 'VALIDATION_ERROR' });
    }
  });

  it('serves an OpenAPI document describing every endpoint', async () => {
    const res = await h.api('/api/docs-json', { key: null });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body.paths)).toEqual(
      expect.arrayContaining([
        '/api/v1/tasks',
        '/api/v1/tasks/{id}',
        '/api/v1/tasks/{id}/stream',
        '/api/v1/tasks/{id}/messages',
        '/api/v1/tasks/{id}/cancel',
        '/api/v1/tasks/{id}/artifacts',
        '/api/v1/tasks/{id}/artifacts/download',
        '/api/v1/tasks/{id}/tools/{callId}/approve',
        '/healthz',
      ]),
    );
  });
});
