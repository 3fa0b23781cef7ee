import type { ObservedAnswer } from './openapi-response-validator';
import { OpenApiResponseValidator } from './openapi-response-validator';

// The validator's own tests, against the real docs/openapi.json. The suites that check the
// service's answers with it pass only as long as it refuses what the document does not allow:
// these are the answers it must refuse, each next to one it must pass.

const TASK_ID = 'task_0123456789abcdef0123456789abcdef';
const CANCEL = '/api/v1/tasks/{id}/cancel';
const TASKS = '/api/v1/tasks';

const jsonAnswer = (status: number, body: unknown, headers: Record<string, string> = {}): ObservedAnswer => ({
  status,
  headers: { 'content-type': 'application/json; charset=utf-8', ...headers },
  body: Buffer.from(JSON.stringify(body)),
});
/** POST /api/v1/tasks/{id}/cancel 200: `{success: true, data: CancelledTask}`, every object closed (additionalProperties: false). */
const cancelled = (data: Record<string, unknown>) => ({ success: true, data });
const rateLimited = { success: false, error: { code: 'RATE_LIMITED', message: 'Rate limit reached; retry in 60 s' } };

describe('OpenApiResponseValidator against docs/openapi.json', () => {
  let validator: OpenApiResponseValidator;
  beforeEach(() => (validator = new OpenApiResponseValidator()));
  const checkCancel = (status: number, body: unknown) => () => validator.check('POST', CANCEL, status, jsonAnswer(status, body));

  it('passes an answer the document allows, and records its operation and status as covered', () => {
    expect(checkCancel(200, cancelled({ id: TASK_ID, status: 'cancelled' }))).not.toThrow();
    expect(validator.coveredPairs()).toEqual(['cancelTask 200']);
  });

  it('refuses a body without a required field', () => {
    expect(checkCancel(200, cancelled({ id: TASK_ID }))).toThrow("body /data: must have required property 'status'");
  });

  it('refuses a field of the wrong type', () => {
    expect(checkCancel(200, cancelled({ id: 42, status: 'cancelled' }))).toThrow('body /data/id: must be string');
  });

  it('refuses a value outside the enum of its field', () => {
    expect(checkCancel(200, cancelled({ id: TASK_ID, status: 'stopped' }))).toThrow(
      'body /data/status: must be equal to one of the allowed values',
    );
  });

  it('refuses a property where the schema has additionalProperties: false', () => {
    expect(checkCancel(200, cancelled({ id: TASK_ID, status: 'cancelled', secret: 'x' }))).toThrow(
      'body /data: must NOT have additional properties "secret"',
    );
  });

  it('refuses a status the document does not list for the operation', () => {
    const conflict = { success: false, error: { code: 'CONFLICT', message: 'no' } };
    expect(checkCancel(409, conflict)).toThrow(
      'POST /api/v1/tasks/{id}/cancel 409: status not documented for cancelTask (documented: 200, ',
    );
  });

  it('refuses an answer whose status is not the one checked for', () => {
    const answer = jsonAnswer(404, { success: false, error: { code: 'NOT_FOUND', message: 'task not found' } });
    expect(() => validator.check('POST', CANCEL, 200, answer)).toThrow('POST /api/v1/tasks/{id}/cancel 200: answered 404 instead');
  });

  it('refuses an error in another code than its status documents', () => {
    expect(checkCancel(404, { success: false, error: { code: 'CONFLICT', message: 'task not found' } })).toThrow(
      'body /error/code: must be equal to one of the allowed values ["NOT_FOUND"]',
    );
  });

  it('refuses a body that is not JSON, and a Content-Type the document does not list', () => {
    const notJson: ObservedAnswer = { status: 200, headers: { 'content-type': 'application/json' }, body: Buffer.from('{"success":') };
    expect(() => validator.check('POST', CANCEL, 200, notJson)).toThrow('body: not JSON');
    const html: ObservedAnswer = { status: 200, headers: { 'content-type': 'text/html' }, body: Buffer.from('<p>ok</p>') };
    expect(() => validator.check('POST', CANCEL, 200, html)).toThrow('Content-Type text/html: the document lists application/json');
  });

  it('refuses an answer without a header the document requires, or with one of the wrong type', () => {
    const check = (headers: Record<string, string>) => () => validator.check('POST', TASKS, 429, jsonAnswer(429, rateLimited, headers));
    expect(check({ 'retry-after': '60' })).not.toThrow();
    expect(check({})).toThrow('header Retry-After: missing');
    expect(check({ 'retry-after': 'soon' })).toThrow('header Retry-After (root): must be integer');
  });

  it('refuses a stream event that is not the variant its type names, or whose event line is another type', () => {
    const stream = (block: string) => () =>
      validator.check('GET', '/api/v1/tasks/{id}/stream', 200, {
        status: 200,
        headers: { 'content-type': 'text/event-stream' },
        body: Buffer.from(`${block}\n\n`),
      });
    const data = (status: string) => JSON.stringify({ type: 'status', data: { status, turn: 1, messageId: 'msg_1' } });
    expect(stream(`id: 1\nevent: status\ndata: ${data('running')}`)).not.toThrow();
    expect(stream(`id: 1\nevent: status\ndata: ${data('sleeping')}`)).toThrow(
      'event 1 (id 1) (StatusEvent) /data/status: must be equal to one of',
    );
    expect(stream(`id: 1\nevent: done\ndata: ${data('running')}`)).toThrow('event 1 (id 1): event "done" is not the data\'s type "status"');
    expect(stream(`event: status\ndata: ${data('running')}`)).toThrow('event 1 (id ?): id "" is not an event id');
  });

  it('refuses an operation the document does not have', () => {
    expect(() => validator.check('DELETE', CANCEL, 200, jsonAnswer(200, {}))).toThrow(
      'DELETE /api/v1/tasks/{id}/cancel 200: the document has no such operation',
    );
  });

  it('records no pair for an answer it refused', () => {
    expect(checkCancel(200, cancelled({ id: TASK_ID }))).toThrow();
    expect(validator.coveredPairs()).toEqual([]);
  });
});
