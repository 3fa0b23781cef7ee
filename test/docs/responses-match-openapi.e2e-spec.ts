import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { Readiness } from '@app/metrics';
import type { ObjectStore } from '@app/object-store';
import { OBJECT_STORE } from '@app/object-store';
import { TaskViewsStore } from '@app/read-models';
import type { WebhookReceiver } from '@app/webhooks/testing/webhook-receiver';
import { startWebhookReceiver } from '@app/webhooks/testing/webhook-receiver';
import { ApproveToolCallHandler } from '../../services/api/src/approvals/approve-tool-call/approve-tool-call.handler';
import { SendFollowUpHandler } from '../../services/api/src/messages/send-follow-up/send-follow-up.handler';
import { CancelTaskHandler } from '../../services/api/src/tasks/cancel-task/cancel-task.handler';
import { ForkTaskHandler } from '../../services/api/src/tasks/fork-task/fork-task.handler';
import { CreateTaskHandler } from '../../services/api/src/tasks/create-task/create-task.handler';
import { TaskAccess } from '../../services/api/src/tasks/task-access';
import { ScheduleBook } from '../../services/api/src/schedules/schedule-book';
import type { ObservedAnswer } from '../support/openapi-response-validator';
import { OpenApiResponseValidator } from '../support/openapi-response-validator';
import type { Pause, RawExchange } from '../support/raw-exchange';
import { rawExchange } from '../support/raw-exchange';
import type { Harness } from '../support/service-harness';
import { API_KEY, OTHER_API_KEY, startHarness, waitFor } from '../support/service-harness';

// Real answers of the running service, for every operation of docs/openapi.json and every status
// the document lists for it, checked against the document's schemas and headers; the last test
// proves every (operation, status) pair was exercised. Timeouts, upload and rate limits are set
// small so that 408, 413 and 429 happen within seconds.

const HEADERS_TIMEOUT_MS = 1_000;
const REQUEST_TIMEOUT_MS = 2_000;
const UPLOAD_MAX_BYTES = 65_536;
const RATE_LIMIT = 25;
const UNKNOWN_TASK = 'task_00000000000000000000000000000000';

const TASKS = '/api/v1/tasks';
const TASK = '/api/v1/tasks/{id}';
const STREAM = '/api/v1/tasks/{id}/stream';
const EVENTS = '/api/v1/tasks/{id}/events';
const MESSAGES = '/api/v1/tasks/{id}/messages';
const CANCEL = '/api/v1/tasks/{id}/cancel';
const FORK = '/api/v1/tasks/{id}/fork';
const APPROVE = '/api/v1/tasks/{id}/tools/{callId}/approve';
const ARTIFACTS = '/api/v1/tasks/{id}/artifacts';
const DOWNLOAD = '/api/v1/tasks/{id}/artifacts/download';
const FILES = '/api/v1/tasks/{id}/files';
const FILE_DOWNLOAD = '/api/v1/tasks/{id}/files/download';
const DELIVERIES = '/api/v1/tasks/{id}/webhook-deliveries';
const REDELIVER = '/api/v1/tasks/{id}/webhook-deliveries/{deliveryId}/redeliver';
const SCHEDULES = '/api/v1/schedules';
const SCHEDULE = '/api/v1/schedules/{id}';
const SCHEDULE_RUNS = '/api/v1/schedules/{id}/runs';
const MAX_SCHEDULES = 3;
const HEALTH = '/healthz';
const READYZ = '/readyz';
const METRICS = '/metrics';
/** The operations for probes and scrapers: no key. */
const UNAUTHENTICATED = [HEALTH, READYZ, METRICS];

interface Call {
  /** Values of the template's `{…}`, inserted as they are (a malformed one stays malformed). */
  readonly params?: Record<string, string>;
  readonly query?: string;
  /** null: no Authorization header. */
  readonly key?: string | null;
  readonly json?: unknown;
  readonly body?: string | FormData;
  readonly headers?: Record<string, string>;
}

describe('Every answer of the running service matches docs/openapi.json', () => {
  const validator = new OpenApiResponseValidator();
  let h: Harness;
  /** A finished task with an artifact (downloads/report.md), a decided tool call and a webhook message: ids for every template. */
  const ids: Record<string, string> = {};
  /** Answers webhooks at once, or holds them (a delivery stays pending) until released. */
  let receiver: WebhookReceiver;
  let held: ServerResponse[] = [];
  let holding = false;

  beforeAll(async () => {
    receiver = await startWebhookReceiver((_request, res) => (holding ? held.push(res) : res.writeHead(204).end()));
    h = await startHarness({
      WEBHOOK_SECRET: `whsec_${randomBytes(32).toString('base64')}`,
      WEBHOOK_ALLOW_HOSTS: `127.0.0.1:${receiver.port}`,
      HTTP_HEADERS_TIMEOUT_MS: String(HEADERS_TIMEOUT_MS),
      HTTP_REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
      UPLOAD_MAX_BYTES: String(UPLOAD_MAX_BYTES),
      RATE_LIMIT_PER_MINUTE: String(RATE_LIMIT),
      MAX_SCHEDULES_PER_TENANT: String(MAX_SCHEDULES),
    });
  });
  afterAll(async () => {
    await h.close();
    await receiver.close();
  });

  const pathOf = (template: string, params: Record<string, string> = {}) =>
    template.replace(/\{(\w+)\}/g, (_m, name: string) => params[name] ?? ids[name]);

  async function send(method: string, template: string, call: Call = {}): Promise<ObservedAnswer> {
    const { params, query = '', key = API_KEY, json, body, headers = {} } = call;
    const response = await fetch(`${h.url}${pathOf(template, params)}${query}`, {
      method,
      headers: {
        ...(key === null ? {} : { authorization: `Bearer ${key}` }),
        ...(json === undefined ? {} : { 'content-type': 'application/json' }),
        ...headers,
      },
      body: json === undefined ? body : JSON.stringify(json),
    });
    return { status: response.status, headers: response.headers, body: Buffer.from(await response.arrayBuffer()) };
  }

  /** Sends the request, checks the answer against the document, and returns its body (parsed when JSON). */
  async function expectAnswer(method: string, template: string, status: number, call: Call = {}): Promise<any> {
    return bodyOf(checked(method, template, status, await send(method, template, call)));
  }

  function checked<T extends ObservedAnswer>(method: string, template: string, status: number, answer: T): T {
    validator.check(method, template, status, answer);
    return answer;
  }

  const observed = (exchange: RawExchange): ObservedAnswer => ({
    status: exchange.status,
    headers: exchange.headers,
    body: exchange.bytes,
  });

  /** Every operation of the document with a path naming real things (and the download's `path`). */
  const everyOperation = () =>
    validator.operations().map(({ method, path }) => ({
      method,
      template: path,
      target: `${pathOf(path)}${path === DOWNLOAD || path === FILE_DOWNLOAD ? '?path=downloads/report.md' : ''}`,
    }));

  const view = async (id: string) => bodyOf(await send('GET', TASK, { params: { id } })).data;
  // One read per probe: reading twice could see pending, then running, and return a running task.
  const settled = (id: string) =>
    waitFor(
      async () => {
        const v = await view(id);
        return v.status === 'pending' || v.status === 'running' ? undefined : v;
      },
      15_000,
      `task ${id} to settle`,
    );
  const pendingCalls = (id: string, count: number) =>
    waitFor(
      async () => {
        const calls = (await view(id)).pendingApprovals as { callId: string }[];
        return calls.length === count ? calls.map((c) => c.callId) : undefined;
      },
      15_000,
      `${count} approval requests of ${id}`,
    );

  it('answers a task from create to download: 201, 200, the whole event stream, the artifact list and bytes', async () => {
    expect(await expectAnswer('GET', HEALTH, 200)).toEqual({ status: 'ok' });
    expect(await expectAnswer('GET', READYZ, 200, { key: null })).toEqual({
      status: 'ready',
      dependencies: { eventStore: 'up', objectStore: 'up' },
    });
    expect(await expectAnswer('GET', METRICS, 200, { key: null })).toMatch(/^# HELP ats_/m);
    h.model.script(
      { toolCalls: [{ name: 'write_file', arguments: { path: 'downloads/report.md', content: '# Report\n\ntotal: 42\n' } }] },
      { text: 'I wrote downloads/report.md.' },
    );
    const created = await expectAnswer('POST', TASKS, 201, { json: { message: 'Write a report', env: { REGION: 'eu' } } });
    ids.id = created.data.id;
    expect((await settled(ids.id)).status).toBe('completed');

    expect((await expectAnswer('GET', TASK, 200)).data.status).toBe('completed');
    const stream = await expectAnswer('GET', STREAM, 200, { query: '?after=0' });
    expect(stream).toMatch(/event: artifact\n/);
    expect(stream).toMatch(/event: done\n/);
    // The audit trail, every kind of this turn's events with its recorded time, in two pages.
    const firstPage = (await expectAnswer('GET', EVENTS, 200, { query: '?limit=4' })).data;
    expect(firstPage.nextAfter).toBe(4);
    const rest = (await expectAnswer('GET', EVENTS, 200, { query: `?after=${firstPage.nextAfter}` })).data;
    expect(rest.nextAfter).toBeUndefined();
    expect([...firstPage.events, ...rest.events].map((e: { type: string }) => e.type)).toEqual(
      [...stream.matchAll(/^event: (\w+)$/gm)].map((m) => m[1]),
    );
    expect((await expectAnswer('GET', ARTIFACTS, 200)).files.map((f: { path: string }) => f.path)).toEqual(['downloads/report.md']);
    const download = await send('GET', DOWNLOAD, { query: '?path=downloads/report.md' });
    expect(checked('GET', DOWNLOAD, 200, download).body.toString('utf8')).toBe('# Report\n\ntotal: 42\n');
    // Time travel: the workspace now and as of event 1 (before any step), one file's bytes then.
    expect((await expectAnswer('GET', FILES, 200)).data.files.map((f: { path: string }) => f.path)).toEqual(['downloads/report.md']);
    expect((await expectAnswer('GET', FILES, 200, { query: '?at=1' })).data).toEqual({ at: 1, files: [], nextCursor: null });
    const asThen = await send('GET', FILE_DOWNLOAD, { query: '?path=downloads/report.md' });
    expect(checked('GET', FILE_DOWNLOAD, 200, asThen).body.toString('utf8')).toBe('# Report\n\ntotal: 42\n');
    // Without a webhook URL the task made no message; webhooks.e2e-spec.ts checks deliveries against the document too.
    expect((await expectAnswer('GET', DELIVERIES, 200)).data).toEqual({ deliveries: [] });

    h.model.script({ text: 'Still 42.' });
    expect((await expectAnswer('POST', MESSAGES, 201, { json: { message: 'Check it again' } })).data.messageId).toMatch(/^msg_/);
    expect((await settled(ids.id)).turn).toBe(2);

    // A fork after the first turn's done, at rest; one after a tool_call is refused, naming where it could be taken.
    const events = (await expectAnswer('GET', EVENTS, 200)).data.events as { id: number; type: string }[];
    const done = events.find((e) => e.type === 'done')!.id;
    const fork = await expectAnswer('POST', FORK, 201, { json: { afterEventId: done } });
    expect(fork.data).toEqual({ id: expect.stringMatching(/^task_/), status: 'completed', forkedFrom: { taskId: ids.id, eventId: done } });
    expect((await expectAnswer('GET', TASK, 200, { params: { id: fork.data.id } })).data.forkedFrom).toEqual(fork.data.forkedFrom);
    const call = events.find((e) => e.type === 'tool_call')!.id;
    expect((await expectAnswer('POST', FORK, 409, { json: { afterEventId: call } })).error.message).toMatch(/before it and \d+ after it/);
  });

  it('answers a redelivery 202, and 409 while its new round is pending', async () => {
    h.model.script({ text: 'Notified.' });
    const id = (await expectAnswer('POST', TASKS, 201, { json: { message: 'Notify me', webhookUrl: `${receiver.origin}/hook` } })).data.id;
    const [delivery] = await waitFor(
      async () => {
        const d = (await expectAnswer('GET', DELIVERIES, 200, { params: { id } })).data.deliveries;
        return d[0]?.status === 'delivered' ? d : undefined;
      },
      15_000,
      'the webhook to be delivered',
    );
    ids.deliveryId = delivery.id;
    holding = true;
    const accepted = await expectAnswer('POST', REDELIVER, 202, { params: { id } });
    expect(accepted.data).toMatchObject({ id: delivery.id, status: 'pending', attempts: delivery.attempts });
    expect((await expectAnswer('POST', REDELIVER, 409, { params: { id } })).error.code).toBe('CONFLICT');
    // Held until it arrives, however late the dispatcher sends it: answered at once, it would never be counted here.
    await waitFor(() => held.length === 1 || undefined, 10_000, 'the redelivered message');
    holding = false;
    held.forEach((res) => res.writeHead(204).end());
    held = [];
  });

  it('answers a multipart create 201, also when its body arrives slower than the headers timeout', async () => {
    const form = new FormData();
    form.append('message', 'Summarise the file');
    form.append('showInHistory', 'false');
    form.append('files', new Blob(['a,b\n1,2\n']), 'data.csv');
    const created = await expectAnswer('POST', TASKS, 201, { body: form });
    expect((await settled(created.data.id)).files).toEqual([{ name: 'data.csv', size: 8 }]);

    // The headers arrive at once, the body after HTTP_HEADERS_TIMEOUT_MS but within HTTP_REQUEST_TIMEOUT_MS.
    const body =
      '--B\r\nContent-Disposition: form-data; name="message"\r\n\r\nRead slow.txt\r\n' +
      '--B\r\nContent-Disposition: form-data; name="files"; filename="slow.txt"\r\nContent-Type: text/plain\r\n\r\nslow\r\n--B--\r\n';
    const head =
      `POST ${TASKS} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${API_KEY}\r\n` +
      `Content-Type: multipart/form-data; boundary=B\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n`;
    const slow = await rawExchange(h.url, [head + body.slice(0, 40), { pauseMs: HEADERS_TIMEOUT_MS + 200 }, body.slice(40)], {
      waitMs: 10_000,
      waitForClose: false,
    });
    checked('POST', TASKS, 201, observed(slow));
    expect((await settled(slow.body.data.id)).files).toEqual([{ name: 'slow.txt', size: 4 }]);
  });

  it('answers a page of tasks 200, and the next page by its cursor 200', async () => {
    const first = await expectAnswer('GET', TASKS, 200, { query: '?limit=1&includeHidden=true' });
    expect(first.data.tasks).toHaveLength(1);
    expect(first.data.nextCursor).toEqual(expect.any(String));
    const next = await expectAnswer('GET', TASKS, 200, { query: `?limit=1&includeHidden=true&cursor=${first.data.nextCursor}` });
    expect(next.data.tasks[0].id).not.toBe(first.data.tasks[0].id);
  });

  it('answers decisions 200 and a second decision 409, while a stream open longer than the request timeout keeps going', async () => {
    h.model.script(
      {
        toolCalls: [
          { name: 'list_files', arguments: {} },
          { name: 'write_file', arguments: { path: 'downloads/declined.md', content: 'no' } },
        ],
      },
      { text: 'One ran, one was declined.' },
    );
    const id = (await expectAnswer('POST', TASKS, 201, { json: { message: 'Two calls', autoExecute: false } })).data.id;
    const [listCall, writeCall] = await pendingCalls(id, 2);
    const opened = Date.now();
    const stream = send('GET', STREAM, { params: { id }, query: '?after=0' });

    await expectAnswer('POST', APPROVE, 400, { params: { id, callId: listCall }, json: { outcome: 'maybe' } });
    // The stream's request was received long ago; only its answer goes on.
    await new Promise((r) => setTimeout(r, REQUEST_TIMEOUT_MS + 500));
    const approved = await expectAnswer('POST', APPROVE, 200, { params: { id, callId: listCall }, json: { outcome: 'proceed_once' } });
    expect(approved.data).toEqual({ callId: listCall, outcome: 'proceed_once', approved: true });
    const declined = await expectAnswer('POST', APPROVE, 200, { params: { id, callId: writeCall }, json: { outcome: 'cancel' } });
    expect(declined.data.approved).toBe(false);
    const again = await expectAnswer('POST', APPROVE, 409, { params: { id, callId: listCall }, json: { outcome: 'cancel' } });
    expect(again.error.code).toBe('CONFLICT');

    const events = bodyOf(checked('GET', STREAM, 200, await stream));
    expect(Date.now() - opened).toBeGreaterThan(REQUEST_TIMEOUT_MS);
    expect(events).toMatch(/event: tool_decision\n[\s\S]*event: done\n/);
    expect((await settled(id)).status).toBe('completed');
    ids.callId = listCall;
  });

  it('answers a follow-up refused while a turn runs 409, and cancel 200 with the cancelled status', async () => {
    h.model.script({ toolCalls: [{ name: 'list_files', arguments: {} }] });
    const id = (await expectAnswer('POST', TASKS, 201, { json: { message: 'Wait for me', autoExecute: false } })).data.id;
    await pendingCalls(id, 1);
    const refused = await expectAnswer('POST', MESSAGES, 409, { params: { id }, json: { message: 'not now', ifRunning: 'reject' } });
    expect(refused.error.code).toBe('CONFLICT');
    expect((await expectAnswer('POST', CANCEL, 200, { params: { id } })).data).toEqual({ id, status: 'cancelled' });
  });

  it('answers invalid values, bodies, URLs and requests 400', async () => {
    await expectAnswer('POST', TASKS, 400, { json: { autoExecute: true } });
    const form = new FormData();
    form.append('message', 'x');
    form.append('autoExecute', 'maybe');
    await expectAnswer('POST', TASKS, 400, { body: form });
    await expectAnswer('GET', TASKS, 400, { query: '?limit=0' });
    await expectAnswer('GET', TASK, 400, { params: { id: '%E0%A4%A' } });
    await expectAnswer('GET', STREAM, 400, { query: '?after=-1' });
    await expectAnswer('GET', EVENTS, 400, { query: '?limit=1001' });
    await expectAnswer('POST', MESSAGES, 400, { json: { message: '' } });
    await expectAnswer('POST', CANCEL, 400, { body: '{', headers: { 'content-type': 'application/json' } });
    await expectAnswer('POST', FORK, 400, { json: { afterEventId: 'x' } });
    await expectAnswer('GET', ARTIFACTS, 400, { params: { id: '%E0%A4%A' } });
    await expectAnswer('GET', DELIVERIES, 400, { params: { id: '%E0%A4%A' } });
    await expectAnswer('POST', REDELIVER, 400, { params: { id: '%E0%A4%A' } });
    await expectAnswer('GET', DOWNLOAD, 400);
    await expectAnswer('GET', FILES, 400, { query: '?at=0' });
    await expectAnswer('GET', FILE_DOWNLOAD, 400);
    // Node would answer a request without Host by itself; the service does, in the envelope.
    for (const path of UNAUTHENTICATED) {
      checked('GET', path, 400, observed(await rawExchange(h.url, [`GET ${path} HTTP/1.1\r\n\r\n`], { waitForClose: false })));
    }
  });

  it('answers schedules 201 and 200, invalid ones 400, unknown or foreign ones 404, one past MAX_SCHEDULES_PER_TENANT 409, a failure 500', async () => {
    const body = { cron: '0 0 1 1 *', task: { message: 'yearly' } };
    const created = (await expectAnswer('POST', SCHEDULES, 201, { json: body })).data;
    const id = { params: { id: created.id } };
    await expectAnswer('GET', SCHEDULES, 200, { query: '?limit=1' });
    await expectAnswer('GET', SCHEDULE, 200, id);
    await expectAnswer('PATCH', SCHEDULE, 200, { ...id, json: { paused: true } });
    await expectAnswer('GET', SCHEDULE_RUNS, 200, id);
    await expectAnswer('POST', SCHEDULES, 400, { json: { ...body, cron: '* * *' } });
    await expectAnswer('GET', SCHEDULES, 400, { query: '?limit=0' });
    await expectAnswer('PATCH', SCHEDULE, 400, { ...id, json: { timezone: 'Nowhere/Land' } });
    await expectAnswer('GET', SCHEDULE_RUNS, 400, { ...id, query: '?cursor=x' });
    await expectAnswer('GET', SCHEDULE, 400, { params: { id: '%E0%A4%A' } });
    await expectAnswer('DELETE', SCHEDULE, 400, { params: { id: '%E0%A4%A' } });
    await expectAnswer('POST', SCHEDULES, 404, { json: { ...body, target: UNKNOWN_TASK } });
    for (const [method, template] of [
      ['GET', SCHEDULE],
      ['PATCH', SCHEDULE],
      ['DELETE', SCHEDULE],
      ['GET', SCHEDULE_RUNS],
    ] as const) {
      await expectAnswer(method, template, 404, { ...id, key: OTHER_API_KEY, json: method === 'PATCH' ? { paused: false } : undefined });
    }
    const more: string[] = [];
    for (let i = 1; i < MAX_SCHEDULES; i++) more.push((await expectAnswer('POST', SCHEDULES, 201, { json: body })).data.id);
    expect((await expectAnswer('POST', SCHEDULES, 409, { json: body })).error.code).toBe('CONFLICT');
    const book = h.app.get(ScheduleBook);
    const fail = (method: 'load' | 'registered' | 'register') =>
      jest.spyOn(book, method).mockRejectedValueOnce(new Error('injected: secret internals'));
    const cases: [string, string, () => jest.SpyInstance, Call][] = [
      ['POST', SCHEDULES, () => fail('register'), { json: body }],
      ['GET', SCHEDULES, () => fail('registered'), {}],
      ['GET', SCHEDULE, () => fail('load'), id],
      ['PATCH', SCHEDULE, () => fail('load'), { ...id, json: { paused: false } }],
      ['DELETE', SCHEDULE, () => fail('load'), id],
      ['GET', SCHEDULE_RUNS, () => fail('load'), id],
    ];
    for (const [method, template, fault, call] of cases) {
      const spy = fault();
      try {
        expect(await expectAnswer(method, template, 500, call)).toEqual({
          success: false,
          error: { code: 'INTERNAL', message: 'Internal error' },
        });
        expect(spy).toHaveBeenCalled();
      } finally {
        spy.mockRestore();
      }
    }
    for (const schedule of [created.id, ...more]) await expectAnswer('DELETE', SCHEDULE, 200, { params: { id: schedule } });
  });

  it('answers 401 to a request without a key and to one with an unknown key, on every authenticated operation', async () => {
    const authenticated = everyOperation().filter(({ template }) => !UNAUTHENTICATED.includes(template));
    for (const { method, template } of authenticated) {
      const json = method === 'POST' ? { message: 'x', outcome: 'cancel' } : undefined;
      expect((await expectAnswer(method, template, 401, { key: null, json })).error.code).toBe('AUTH_REQUIRED');
      expect((await expectAnswer(method, template, 401, { key: 'not-a-key', json })).error.code).toBe('INVALID_API_KEY');
    }
  });

  it('answers 404 to unknown or foreign tasks, unknown tool calls and unknown artifacts', async () => {
    const unknown = { params: { id: UNKNOWN_TASK } };
    await expectAnswer('GET', TASK, 404, unknown);
    await expectAnswer('GET', TASK, 404, { key: OTHER_API_KEY });
    await expectAnswer('GET', STREAM, 404, unknown);
    await expectAnswer('GET', EVENTS, 404, unknown);
    await expectAnswer('GET', EVENTS, 404, { key: OTHER_API_KEY });
    await expectAnswer('POST', MESSAGES, 404, { ...unknown, json: { message: 'hello?' } });
    await expectAnswer('POST', CANCEL, 404, unknown);
    await expectAnswer('POST', FORK, 404, { ...unknown, json: { afterEventId: 1 } });
    await expectAnswer('POST', FORK, 404, { json: { afterEventId: 10_000 } });
    await expectAnswer('POST', APPROVE, 404, { params: { callId: 'call_unknown' }, json: { outcome: 'cancel' } });
    await expectAnswer('GET', ARTIFACTS, 404, unknown);
    await expectAnswer('GET', DELIVERIES, 404, unknown);
    await expectAnswer('GET', DELIVERIES, 404, { key: OTHER_API_KEY });
    await expectAnswer('POST', REDELIVER, 404, unknown);
    await expectAnswer('POST', REDELIVER, 404, { key: OTHER_API_KEY });
    await expectAnswer('POST', REDELIVER, 404, { params: { deliveryId: 'wh_unknown_1' } });
    await expectAnswer('GET', DOWNLOAD, 404, { query: '?path=downloads/missing.md' });
    await expectAnswer('GET', FILES, 404, { query: '?at=100000' });
    await expectAnswer('GET', FILES, 404, { key: OTHER_API_KEY });
    await expectAnswer('GET', FILE_DOWNLOAD, 404, { query: '?path=downloads/missing.md' });
  });

  it('answers 413 to bodies over UPLOAD_MAX_BYTES, and on every operation to chunk extensions over 16 KiB', async () => {
    const big = { message: 'x'.repeat(UPLOAD_MAX_BYTES) };
    await expectAnswer('POST', TASKS, 413, { json: big });
    const form = new FormData();
    form.append('message', 'too big');
    form.append('files', new Blob(['x'.repeat(UPLOAD_MAX_BYTES)]), 'big.txt');
    await expectAnswer('POST', TASKS, 413, { body: form });
    await expectAnswer('POST', MESSAGES, 413, { json: big });
    await expectAnswer('POST', CANCEL, 413, { json: big });
    await expectAnswer('POST', FORK, 413, { json: { afterEventId: 1, ...big } });
    await expectAnswer('POST', APPROVE, 413, { json: { outcome: 'cancel', padding: big.message } });

    const extension = `;${'e'.repeat(17_000)}`;
    for (const { method, template, target } of everyOperation()) {
      const request = `${method} ${target} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${API_KEY}\r\nTransfer-Encoding: chunked\r\n\r\n1${extension}\r\nx\r\n0\r\n\r\n`;
      const answer = await rawExchange(h.url, [request]);
      expect(answer.endedByServer).toBe(true);
      checked(method, template, 413, observed(answer));
    }
  });

  it('answers 429 with Retry-After once a tenant spent RATE_LIMIT_PER_MINUTE creates and follow-ups', async () => {
    // Tenant B spends its own limit (invalid creates count too, and start nothing): A's flows are untouched.
    for (let i = 0; i < RATE_LIMIT; i++) await expectAnswer('POST', TASKS, 400, { key: OTHER_API_KEY, json: {} });
    expect((await expectAnswer('POST', TASKS, 429, { key: OTHER_API_KEY, json: { message: 'one more' } })).error.code).toBe('RATE_LIMITED');
    // The limit is checked before the task is looked up.
    await expectAnswer('POST', MESSAGES, 429, { key: OTHER_API_KEY, params: { id: UNKNOWN_TASK }, json: { message: 'one more' } });
    await expectAnswer('POST', FORK, 429, { key: OTHER_API_KEY, params: { id: UNKNOWN_TASK }, json: { afterEventId: 1 } });
  });

  it('answers 431 on every operation to headers over 16 KiB', async () => {
    for (const { method, template, target } of everyOperation()) {
      const answer = await rawExchange(h.url, [`${method} ${target} HTTP/1.1\r\nHost: x\r\nX-Padding: ${'p'.repeat(17_000)}\r\n\r\n`]);
      expect(answer.endedByServer).toBe(true);
      checked(method, template, 431, observed(answer));
    }
  });

  it('answers 408 on every operation whose headers stall past HTTP_HEADERS_TIMEOUT_MS, and to a body stalled past HTTP_REQUEST_TIMEOUT_MS', async () => {
    const stalled = (chunks: (string | Pause)[]) => rawExchange(h.url, chunks, { waitMs: REQUEST_TIMEOUT_MS + 5_000 });
    const started = Date.now();
    const headersStalled = everyOperation().map(async ({ method, template, target }) => ({
      method,
      template,
      answer: await stalled([`${method} ${target} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${API_KEY}\r\n`]),
    }));
    const head = `POST ${TASKS} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${API_KEY}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n`;
    const bodyStalled = stalled([head, '{"message":']).then((answer) => ({ method: 'POST', template: TASKS, answer }));
    const answers = await Promise.all([...headersStalled, bodyStalled]);
    for (const { method, template, answer } of answers) {
      expect(answer.endedByServer).toBe(true);
      checked(method, template, 408, observed(answer));
    }
    expect(Date.now() - started).toBeGreaterThanOrEqual(REQUEST_TIMEOUT_MS);
  });

  it('answers 500 with the generic envelope when what an operation calls fails', async () => {
    const inject = <T extends object>(provider: T, method: keyof T & string) =>
      jest.spyOn(provider as Record<string, any>, method).mockRejectedValueOnce(new Error('injected: secret internals'));
    const access = h.app.get(TaskAccess);
    const cases: [string, string, () => jest.SpyInstance, Call?][] = [
      ['POST', TASKS, () => inject(h.app.get(CreateTaskHandler), 'execute'), { json: { message: 'x' } }],
      [
        'GET',
        TASKS,
        () =>
          jest.spyOn(h.app.get(TaskViewsStore), 'list').mockImplementationOnce(() => {
            throw new Error('injected: secret internals');
          }),
      ],
      ['GET', TASK, () => inject(access, 'find')],
      ['GET', STREAM, () => inject(access, 'find')],
      ['GET', EVENTS, () => inject(access, 'find')],
      ['POST', MESSAGES, () => inject(h.app.get(SendFollowUpHandler), 'execute'), { json: { message: 'x' } }],
      ['POST', CANCEL, () => inject(h.app.get(CancelTaskHandler), 'execute')],
      ['POST', FORK, () => inject(h.app.get(ForkTaskHandler), 'execute'), { json: { afterEventId: 1 } }],
      ['POST', APPROVE, () => inject(h.app.get(ApproveToolCallHandler), 'execute'), { json: { outcome: 'cancel' } }],
      ['GET', ARTIFACTS, () => inject(access, 'find')],
      ['GET', DELIVERIES, () => inject(access, 'find')],
      ['POST', REDELIVER, () => inject(access, 'find')],
      ['GET', DOWNLOAD, () => inject(h.app.get<ObjectStore>(OBJECT_STORE), 'get'), { query: '?path=downloads/report.md' }],
      ['GET', FILES, () => inject(access, 'find')],
      ['GET', FILE_DOWNLOAD, () => inject(h.app.get<ObjectStore>(OBJECT_STORE), 'get'), { query: '?path=downloads/report.md' }],
    ];
    for (const [method, template, fault, call] of cases) {
      const spy = fault();
      try {
        const body = await expectAnswer(method, template, 500, call);
        expect(body).toEqual({ success: false, error: { code: 'INTERNAL', message: 'Internal error' } });
        expect(spy).toHaveBeenCalled();
      } finally {
        spy.mockRestore();
      }
    }
  });

  it('answers /readyz 503 naming a dependency that does not answer', async () => {
    const remove = h.app.get(Readiness).add('probe', () => Promise.reject(new Error('down on purpose')));
    try {
      expect(await expectAnswer('GET', READYZ, 503, { key: null })).toEqual({
        status: 'unavailable',
        dependencies: { eventStore: 'up', objectStore: 'up', probe: 'down' },
      });
    } finally {
      remove();
    }
  });

  it('exercised every (operation, status) pair the document lists', () => {
    expect(validator.coveredPairs()).toEqual(validator.documentedPairs());
  });
});

function bodyOf(answer: ObservedAnswer): any {
  const text = answer.body.toString('utf8');
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
