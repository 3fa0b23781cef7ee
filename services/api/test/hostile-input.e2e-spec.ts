import { readFile, rm } from 'node:fs/promises';
import { execFile } from 'node:child_process';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { rawExchange } from '../../../test/support/raw-exchange';
import type { Harness } from '../../../test/support/service-harness';
import { API_KEY, startHarness, waitFor } from '../../../test/support/service-harness';
import { writeZip } from '../../sandbox/src/uploads/testing/zip-fixtures';

const execFileAsync = promisify(execFile);
const envelope = (code: string) => ({ success: false, error: { code, message: expect.any(String) } });

describe('API: hostile input is refused in the error envelope, and no connection hangs', () => {
  let h: Harness;
  beforeAll(async () => (h = await startHarness({ UPLOAD_MAX_FILES: '3' })));
  afterAll(async () => h.close());

  const taskCount = async () => (await h.api('/api/v1/tasks?includeHidden=true&limit=100')).body.data.tasks.length;
  const createRaw = (body: string, contentType = 'application/json') =>
    h.api('/api/v1/tasks', { method: 'POST', body, headers: { 'content-type': contentType } });
  const postForm = (form: FormData) => h.api('/api/v1/tasks', { method: 'POST', body: form });
  const idle = async () =>
    ((await h.api('/api/v1/tasks?includeHidden=true&limit=100')).body.data.tasks as { status: string }[]).every(
      (t) => t.status !== 'pending' && t.status !== 'running',
    );
  const newTask = async () =>
    (await h.api('/api/v1/tasks', { method: 'POST', json: { message: 'a task to poke at', autoExecute: false } })).body.data.id as string;

  describe('NUL characters and lone surrogates (A, B)', () => {
    it('refuses a NUL in a secret value with 400 naming the secret, never echoing the value, and creates nothing', async () => {
      const before = await taskCount();
      const res = await h.api('/api/v1/tasks', { method: 'POST', json: { message: 'x', secrets: { TOKEN: 'abc\u0000defghijklmnop' } } });
      expect(res.status).toBe(400);
      expect(res.body).toEqual(envelope('VALIDATION_ERROR'));
      expect(res.body.error.message).toMatch(/secrets.*TOKEN.*NUL/);
      expect(JSON.stringify(res.body)).not.toContain('defghijklmnop');
      expect(await taskCount()).toBe(before);
    });

    it('refuses a NUL in an env value with 400 naming the variable', async () => {
      const res = await h.api('/api/v1/tasks', { method: 'POST', json: { message: 'x', env: { REGION: 'eu\u0000west' } } });
      expect(res.status).toBe(400);
      expect(res.body).toEqual(envelope('VALIDATION_ERROR'));
      expect(res.body.error.message).toMatch(/env.*REGION.*NUL/);
    });

    it.each([
      ['a NUL', '{"message":"hi\\u0000there"}', /message.*NUL/],
      ['a lone high surrogate', '{"message":"hi\\ud800there"}', /message.*surrogate/],
      ['a lone low surrogate', '{"message":"\\udc00"}', /message.*surrogate/],
    ])('refuses a create message with %s with 400 naming message', async (_case, body, message) => {
      const res = await createRaw(body);
      expect(res.status).toBe(400);
      expect(res.body).toEqual(envelope('VALIDATION_ERROR'));
      expect(res.body.error.message).toMatch(message);
    });

    it('accepts a message with a well-formed surrogate pair (an emoji)', async () => {
      const res = await createRaw('{"message":"ship it \\ud83d\\ude80","autoExecute":false}');
      expect(res.status).toBe(201);
    });

    it('answers ids and query values with a NUL or an encoded lone surrogate without a 500', async () => {
      const id = await newTask();
      for (const path of [
        '/api/v1/tasks/task_%00',
        '/api/v1/tasks/task_%ED%A0%80',
        `/api/v1/tasks/${id}/tools/call_%00/approve`,
        `/api/v1/tasks/${id}/artifacts/download?path=downloads/a%00b`,
        `/api/v1/tasks/${id}/artifacts/download?path=downloads/%ED%A0%80`,
        `/api/v1/tasks/${id}/artifacts/download?path=downloads/%F0%9F`,
        `/api/v1/tasks/${id}/stream?after=%00`,
        '/api/v1/tasks?cursor=%00',
      ]) {
        const res = await h.api(path, path.endsWith('/approve') ? { method: 'POST', json: { outcome: 'proceed_once' } } : {});
        expect({
          path,
          status: res.status < 500,
          envelope: res.body.success === false && typeof res.body.error?.code === 'string',
        }).toEqual({ path, status: true, envelope: true });
      }
    });

    it.each([
      ['a NUL', '{"message":"more\\u0000"}', /message.*NUL/],
      ['a lone surrogate', '{"message":"more\\ud800"}', /message.*surrogate/],
    ])('refuses a follow-up message with %s with 400 naming message', async (_case, body, message) => {
      const id = await newTask();
      const res = await h.api(`/api/v1/tasks/${id}/messages`, { method: 'POST', body, headers: { 'content-type': 'application/json' } });
      expect(res.status).toBe(400);
      expect(res.body).toEqual(envelope('VALIDATION_ERROR'));
      expect(res.body.error.message).toMatch(message);
    });

    it.each([
      ['message', 'hello\u0000world', /message.*NUL/],
      ['env', '{"REGION":"eu\\u0000"}', /env.*REGION.*NUL/],
    ])('refuses a NUL in the multipart text field %s with 400 naming it', async (field, value, message) => {
      const form = new FormData();
      form.append('message', 'fine');
      form.set(field, value);
      const res = await postForm(form);
      expect(res.status).toBe(400);
      expect(res.body).toEqual(envelope('VALIDATION_ERROR'));
      expect(res.body.error.message).toMatch(message);
    });

    it.each([
      [
        'a NUL in a header value',
        '{"message":"x","mcpServers":{"docs":{"url":"https://mcp.example.com/","headers":{"X-Key":"a\\u0000b"}}}}',
        /mcpServers\.docs\.headers\.X-Key.*NUL/,
      ],
      [
        'a lone surrogate in a header value',
        '{"message":"x","mcpServers":{"docs":{"url":"https://mcp.example.com/","headers":{"X-Key":"\\ud800"}}}}',
        /mcpServers\.docs\.headers\.X-Key.*surrogate/,
      ],
      ['a NUL in the url', '{"message":"x","mcpServers":{"docs":{"url":"https://mcp.example.com/\\u0000"}}}', /mcpServers\.docs\.url.*NUL/],
    ])('refuses mcpServers with %s with 400 naming the field', async (_case, body, message) => {
      const res = await createRaw(body);
      expect(res.status).toBe(400);
      expect(res.body).toEqual(envelope('VALIDATION_ERROR'));
      expect(res.body.error.message).toMatch(message);
    });
  });

  describe('deeply nested and malformed bodies (B)', () => {
    const deep = (levels: number) => '{"a":'.repeat(levels) + '1' + '}'.repeat(levels);

    it.each([
      ['objects in env', `{"message":"x","env":${deep(10_000)}}`],
      ['arrays in secrets', `{"message":"x","secrets":${'['.repeat(10_000)}${']'.repeat(10_000)}}`],
      ['a whole body of objects', deep(100_000)],
    ])('refuses a JSON body nested 10,000+ levels deep (%s) with 400 before parsing it', async (_case, body) => {
      const res = await createRaw(body);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        success: false,
        error: { code: 'VALIDATION_ERROR', message: 'request body is nested deeper than 32 levels' },
      });
    });

    it('still accepts brackets and braces inside JSON strings, however many', async () => {
      const res = await createRaw(
        JSON.stringify({ message: `${'[{'.repeat(1000)} "quoted \\" ]} ${'}]'.repeat(1000)}`, autoExecute: false }),
      );
      expect(res.status).toBe(201);
    });

    it('refuses a multipart JSON field nested 10,000 levels deep with 400 naming the field', async () => {
      const form = new FormData();
      form.append('message', 'x');
      form.append('env', deep(10_000));
      const res = await postForm(form);
      expect(res.status).toBe(400);
      expect(res.body).toEqual(envelope('VALIDATION_ERROR'));
      expect(res.body.error.message).toMatch(/env.*nested deeper than 32 levels/);
    });

    it('refuses multipart/form-data without a boundary with 400 saying the boundary is missing', async () => {
      const res = await createRaw('--x\r\nContent-Disposition: form-data; name="message"\r\n\r\nhi\r\n--x--\r\n', 'multipart/form-data');
      expect(res.status).toBe(400);
      expect(res.body).toEqual(envelope('VALIDATION_ERROR'));
      expect(res.body.error.message).toContain('boundary');
    });

    it('answers a multipart body that ends inside a file with 400 instead of never answering', async () => {
      const part =
        '--B\r\nContent-Disposition: form-data; name="message"\r\n\r\nhi\r\n--B\r\nContent-Disposition: form-data; name="files"; filename="a.txt"\r\n\r\nabc';
      const head = `POST /api/v1/tasks HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${API_KEY}\r\nContent-Type: multipart/form-data; boundary=B\r\nContent-Length: ${part.length}\r\n\r\n`;
      const res = await rawExchange(h.url, [head + part], { waitMs: 5_000, waitForClose: false });
      expect(res.status).toBe(400);
      expect(res.body).toEqual(envelope('VALIDATION_ERROR'));
      expect(res.body.error.message).toContain('multipart');
    });
  });

  describe('errors Fastify and Node answer themselves (C)', () => {
    it('answers a 10,000-character task id with 404 NOT_FOUND in the envelope', async () => {
      for (const path of [`/api/v1/tasks/${'a'.repeat(10_000)}`, `/api/v1/tasks/${'a'.repeat(10_000)}/stream`]) {
        const res = await h.api(path);
        expect({ path: path.slice(-20), status: res.status, body: res.body }).toEqual({
          path: path.slice(-20),
          status: 404,
          body: envelope('NOT_FOUND'),
        });
      }
    });

    it('answers invalid percent-encoding in the path with 400 VALIDATION_ERROR in the envelope', async () => {
      for (const path of ['/api/v1/tasks/%E0%A4%A', '/api/v1/tasks/a%ED%A0%80b']) {
        const res = await h.api(path);
        expect({ path, status: res.status, body: res.body }).toEqual({ path, status: 400, body: envelope('VALIDATION_ERROR') });
        expect(res.body.error.message).toContain('URL');
      }
    });

    it('answers headers over the size limit with 431 PAYLOAD_TOO_LARGE in the envelope and closes the connection', async () => {
      const head = `GET /api/v1/tasks HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${API_KEY}\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`;
      const res = await rawExchange(h.url, [head]);
      expect(res.status).toBe(431);
      expect(res.body).toEqual(envelope('PAYLOAD_TOO_LARGE'));
      expect(res.headers.connection).toBe('close');
      expect(res.endedByServer).toBe(true);
    });

    it('answers a malformed HTTP request with 400 VALIDATION_ERROR in the envelope and closes the connection', async () => {
      const res = await rawExchange(h.url, ['GARBAGE\r\n\r\n']);
      expect(res.status).toBe(400);
      expect(res.body).toEqual(envelope('VALIDATION_ERROR'));
      expect(res.headers.connection).toBe('close');
      expect(res.endedByServer).toBe(true);
    });

    it('answers an unknown route with 404 NOT_FOUND in the envelope', async () => {
      const res = await h.api('/api/v1/nope');
      expect(res).toMatchObject({ status: 404, body: envelope('NOT_FOUND') });
    });
  });

  describe('ZIP entries too deep for the filesystem (D)', () => {
    it('refuses a ZIP entry 2,000 folders deep with 400 naming the archive and the entry, and creates nothing', async () => {
      const zipPath = join(tmpdir(), `ats-deep-${process.pid}-${Date.now()}.zip`);
      await writeZip(zipPath, [{ name: `${'a/'.repeat(2_000)}x.txt`, content: 'deep' }]);
      const before = await taskCount();
      const form = new FormData();
      form.append('message', 'unpack it');
      form.append('files', new Blob([await readFile(zipPath)]), 'deep.zip');
      await rm(zipPath, { force: true });
      const res = await postForm(form);
      expect(res.status).toBe(400);
      expect(res.body).toEqual(envelope('VALIDATION_ERROR'));
      expect(res.body.error.message).toContain('archive "deep.zip"');
      expect(res.body.error.message).toContain('entry "a/a/a/');
      expect(res.body.error.message.length).toBeLessThan(600);
      expect(await taskCount()).toBe(before);
    });
  });

  describe('a request body left unread (E)', () => {
    it('closes the connection after a 413 sent while a chunked multipart body was still arriving', async () => {
      const part = (i: number) =>
        `--B\r\nContent-Disposition: form-data; name="files"; filename="f${i}.txt"\r\nContent-Type: text/plain\r\n\r\n${'x'.repeat(1024)}\r\n`;
      const chunk = (text: string) => `${Buffer.byteLength(text).toString(16)}\r\n${text}\r\n`;
      const head = `POST /api/v1/tasks HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${API_KEY}\r\nContent-Type: multipart/form-data; boundary=B\r\nTransfer-Encoding: chunked\r\n\r\n`;
      // More files than UPLOAD_MAX_FILES (3 here), and the body never finishes.
      const parts = [
        chunk('--B\r\nContent-Disposition: form-data; name="message"\r\n\r\nhi\r\n'),
        ...[0, 1, 2, 3, 4].map((i) => chunk(part(i))),
      ];
      const res = await rawExchange(h.url, [head, ...parts]);
      expect(res.status).toBe(413);
      expect(res.body).toEqual(envelope('PAYLOAD_TOO_LARGE'));
      // A lingering close: the answer, then the server's FIN (Node would reset a `Connection: close` socket at once).
      expect(res.endedByServer).toBe(true);
    });

    it("answers a 300 MB create, multipart or JSON, with a 413 that Node's http client, still sending, reads every time (it failed with EPIPE)", async () => {
      // A client in its own process, piping its body from a stream as fast as the socket takes it:
      // when the server closed at once, the client's next write failed (EPIPE) before it read the answer.
      const client = `
        const { request } = require('node:http');
        const { Readable } = require('node:stream');
        const req = request(process.argv[1] + '/api/v1/tasks', { method: 'POST', headers: {
          authorization: 'Bearer ${API_KEY}', 'content-type': process.argv[2], 'content-length': String(300 * 1024 * 1024) } });
        let answered = false;
        req.on('response', (res) => {
          answered = true;
          let body = '';
          res.on('data', (d) => (body += d));
          res.on('end', () => { console.log(JSON.stringify({ status: res.statusCode, body: JSON.parse(body) })); process.exit(0); });
        });
        req.on('error', (error) => { if (!answered) { console.log(JSON.stringify({ error: error.code })); process.exit(0); } });
        req.write(process.argv[3]);
        const chunk = Buffer.alloc(64 * 1024, 120);
        Readable.from((function* () { for (let i = 0; i < 4800; i++) yield chunk; })()).pipe(req);
      `;
      const kinds = [
        ['multipart/form-data; boundary=B', '--B\r\nContent-Disposition: form-data; name="files"; filename="big.bin"\r\n\r\n'],
        ['application/json', '{"message":"'],
      ];
      for (const [contentType, start] of kinds) {
        for (let run = 0; run < 6; run++) {
          const { stdout } = await execFileAsync(process.execPath, ['-e', client, h.url, contentType, start], { timeout: 30_000 });
          expect({ contentType, run, answer: JSON.parse(stdout) }).toEqual({
            contentType,
            run,
            answer: { status: 413, body: envelope('PAYLOAD_TOO_LARGE') },
          });
        }
      }
    });

    it('drains a small declared body refused midway (413): the client still sending it gets the answer, and the connection stays usable', async () => {
      const part = (i: number) =>
        `--B\r\nContent-Disposition: form-data; name="files"; filename="f${i}.txt"\r\nContent-Type: text/plain\r\n\r\n${'x'.repeat(1024)}\r\n`;
      // More files than UPLOAD_MAX_FILES (3 here): refused at the fourth while the rest is still to come.
      const sent = `--B\r\nContent-Disposition: form-data; name="message"\r\n\r\nhi\r\n${[0, 1, 2, 3].map(part).join('')}`;
      const rest = `${part(4)}--B--\r\n`;
      const head = `POST /api/v1/tasks HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${API_KEY}\r\nContent-Type: multipart/form-data; boundary=B\r\nContent-Length: ${Buffer.byteLength(sent + rest)}\r\n\r\n`;
      const { hostname, port } = new URL(h.url);
      const socket = connect(Number(port), hostname);
      let response = '';
      let ended = false;
      socket.on('data', (d) => (response += d.toString('latin1')));
      socket.on('end', () => (ended = true));
      socket.on('error', () => (ended = true));
      socket.write(head + sent);
      await waitFor(() => response.includes('\r\n\r\n') || undefined, 5_000, 'the 413');
      // The client goes on sending its body, then asks again on the same connection.
      socket.write(`${rest}GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n`);
      await waitFor(() => response.match(/HTTP\/1\.1 \d+/g)?.length === 2 || ended || undefined, 5_000, 'the second answer');
      socket.destroy();
      expect(response.match(/HTTP\/1\.1 \d+/g)).toEqual(['HTTP/1.1 413', 'HTTP/1.1 200']);
      expect(response.toLowerCase()).not.toContain('connection: close');
      expect(ended).toBe(false);
    });

    it('keeps the connection usable after refusing a body nobody started reading', async () => {
      const id = await newTask();
      const body = '--B\r\nContent-Disposition: form-data; name="message"\r\n\r\nhi\r\n--B--\r\n';
      // The fork endpoint takes JSON only: the multipart body is refused unread.
      const first = `POST /api/v1/tasks/${id}/fork HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${API_KEY}\r\nContent-Type: multipart/form-data; boundary=B\r\nContent-Length: ${body.length}\r\n\r\n${body}`;
      const second = 'GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n';
      const res = await rawExchange(h.url, [first + second]);
      expect(res.response.match(/HTTP\/1\.1 \d+/g)).toEqual(['HTTP/1.1 400', 'HTTP/1.1 200']);
      expect(res.endedByServer).toBe(false);
    });

    it('closes the connection after a 413 for a declared JSON body over the body limit, without parsing it', async () => {
      const head = `POST /api/v1/tasks HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${API_KEY}\r\nContent-Type: application/json\r\nContent-Length: 900000000\r\n\r\n`;
      const res = await rawExchange(h.url, [head, '{"message":"']);
      expect(res.status).toBe(413);
      expect(res.body).toEqual(envelope('PAYLOAD_TOO_LARGE'));
      expect(res.body.error.message).toMatch(/body is too large/i);
      // A lingering close: the answer, then the server's FIN.
      expect(res.endedByServer).toBe(true);
    });
  });

  describe('content types and sizes (F)', () => {
    it('refuses a 10 MB message sent as text/plain with 400 saying application/json is required', async () => {
      const res = await createRaw(JSON.stringify({ message: 'a'.repeat(10 * 1024 * 1024) }), 'text/plain;charset=UTF-8');
      expect(res.status).toBe(400);
      expect(res.body).toEqual(envelope('VALIDATION_ERROR'));
      expect(res.body.error.message).toContain('application/json');
      expect(res.body.error.message.length).toBeLessThan(300);
    });

    it('refuses a JSON create message over MAX_MESSAGE_LENGTH with 400 naming message', async () => {
      const res = await h.api('/api/v1/tasks', { method: 'POST', json: { message: 'a'.repeat(10 * 1024 * 1024) } });
      expect(res.status).toBe(400);
      expect(res.body).toEqual(envelope('VALIDATION_ERROR'));
      expect(res.body.error.message).toMatch(/^message must be shorter than or equal to 100000 characters/);
    });

    it('refuses form-encoded bodies on create, follow-up and approve with 400 saying application/json is required', async () => {
      const id = await newTask();
      const form = { 'content-type': 'application/x-www-form-urlencoded' };
      for (const [path, body] of [
        ['/api/v1/tasks', 'message=hi'],
        [`/api/v1/tasks/${id}/messages`, 'message=hi'],
        [`/api/v1/tasks/${id}/tools/call_x/approve`, 'outcome=proceed_once'],
      ]) {
        const res = await h.api(path, { method: 'POST', body, headers: form });
        expect({ path, status: res.status, body: res.body }).toEqual({ path, status: 400, body: envelope('VALIDATION_ERROR') });
        expect(res.body.error.message).toContain('application/json');
      }
    });

    it('takes a follow-up as multipart text fields, and refuses one carrying a file with 400', async () => {
      const id = await newTask();
      const form = new FormData();
      form.append('message', 'hi');
      const res = await h.api(`/api/v1/tasks/${id}/messages`, { method: 'POST', body: form });
      expect(res.status).toBe(201);
      const withFile = new FormData();
      withFile.append('message', 'hi');
      withFile.append('files', new Blob(['x']), 'a.txt');
      const refused = await h.api(`/api/v1/tasks/${id}/messages`, { method: 'POST', body: withFile });
      expect(refused.status).toBe(400);
      expect(refused.body).toEqual(envelope('VALIDATION_ERROR'));
      expect(refused.body.error.message).toContain('carries no files');
    });

    it('still cancels with an empty body and no content type', async () => {
      const id = await newTask();
      const res = await h.api(`/api/v1/tasks/${id}/cancel`, { method: 'POST' });
      expect(res.status).toBe(200);
    });
  });

  // Found by the API fuzz suite (services/api/test/fuzz/api.fuzz.e2e-spec.ts).
  describe('found by the fuzz suite (G)', () => {
    it('takes webhookUrl null as not given, as every optional field of a create, instead of a 500', async () => {
      const res = await h.api('/api/v1/tasks', { method: 'POST', json: { message: 'no webhook', webhookUrl: null } });
      expect(res.status).toBe(201);
      expect((await h.api(`/api/v1/tasks/${res.body.data.id}`)).body.data.webhookUrl).toBeNull();
    });

    it('accepts a "constructor" env variable and refuses nested "constructor" keys with 400, never a 500', async () => {
      const created = await h.api('/api/v1/tasks', {
        method: 'POST',
        json: { message: 'a variable named constructor', autoExecute: false, env: { constructor: 'x' } },
      });
      expect(created.status).toBe(201);
      const id = created.body.data.id;
      for (const [path, body] of [
        ['/api/v1/tasks', '{"message":"x","env":{"constructor":{}}}'],
        ['/api/v1/tasks', '{"message":"x","surprise":{"constructor":1}}'],
        ['/api/v1/tasks', '{"message":"x","constructor":"y"}'],
        [`/api/v1/tasks/${id}/messages`, '{"message":"x","extra":[{"constructor":"y"}]}'],
        [`/api/v1/tasks/${id}/tools/call_x/approve`, '{"outcome":{"constructor":1}}'],
      ]) {
        const res = await h.api(path, { method: 'POST', body, headers: { 'content-type': 'application/json' } });
        expect({ path, body, status: res.status, envelope: res.body }).toEqual({
          path,
          body,
          status: 400,
          envelope: envelope('VALIDATION_ERROR'),
        });
      }
    });

    it('refuses a "__proto__" key in a multipart JSON field with 400, as a JSON body does (it is no longer dropped silently)', async () => {
      const form = new FormData();
      form.append('message', 'x');
      form.append('env', '{"__proto__":"abcdef"}');
      const res = await postForm(form);
      expect(res.status).toBe(400);
      expect(res.body).toEqual(envelope('VALIDATION_ERROR'));
      expect(res.body.error.message).toMatch(/^env: a key "__proto__" is not allowed/);
      expect((await createRaw('{"message":"x","env":{"__proto__":"abcdef"}}')).status).toBe(400);
    });

    it('answers an HTTP/1.1 request without Host with 400 in the envelope (was a bare 400 from Node); HTTP/1.0 needs none', async () => {
      const res = await rawExchange(h.url, ['GET /healthz HTTP/1.1\r\n\r\n'], { waitForClose: false });
      expect(res.status).toBe(400);
      expect(res.body).toEqual(envelope('VALIDATION_ERROR'));
      expect(res.body.error.message).toContain('Host');
      expect((await rawExchange(h.url, ['GET /healthz HTTP/1.0\r\n\r\n'])).status).toBe(200);
    });

    it('answers an Expect other than 100-continue with 400 in the envelope (was a bare 417 from Node); 100-continue still works', async () => {
      const res = await rawExchange(
        h.url,
        [`GET /api/v1/tasks HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${API_KEY}\r\nExpect: something-else\r\n\r\n`],
        { waitForClose: false },
      );
      expect(res.status).toBe(400);
      expect(res.body).toEqual(envelope('VALIDATION_ERROR'));
      expect(res.body.error.message).toContain('Expect');
      const body = '{"message":"expecting to continue","autoExecute":false}';
      const head = `POST /api/v1/tasks HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${API_KEY}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nExpect: 100-continue\r\n\r\n`;
      const created = await rawExchange(h.url, [head, body], { waitForClose: false });
      expect(created.response).toMatch(/^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 201 /);
    });

    it('answers CONNECT with 404 NOT_FOUND in the envelope and closes the connection (was dropped unanswered)', async () => {
      for (const target of ['example.com:443', '/api/v1/tasks']) {
        const res = await rawExchange(h.url, [`CONNECT ${target} HTTP/1.1\r\nHost: x\r\n\r\n`]);
        expect({ target, status: res.status, body: res.body, closed: res.endedByServer }).toEqual({
          target,
          status: 404,
          body: envelope('NOT_FOUND'),
          closed: true,
        });
      }
    });

    it('answers a multipart create declared over the body limit with 413 at once and closes the connection (it waited for the body)', async () => {
      const head = `POST /api/v1/tasks HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${API_KEY}\r\nContent-Type: multipart/form-data; boundary=B\r\nContent-Length: 900000000\r\n\r\n`;
      const res = await rawExchange(h.url, [head, '--B\r\nContent-Disposition: form-data; name="message"\r\n\r\nhi\r\n--B\r\n']);
      expect(res.status).toBe(413);
      expect(res.body).toEqual(envelope('PAYLOAD_TOO_LARGE'));
      expect(res.body.error.message).toContain('UPLOAD_MAX_BYTES');
      // A lingering close: the answer, then the server's FIN (Node would reset a `Connection: close` socket at once).
      expect(res.endedByServer).toBe(true);
    });

    it('answers HEAD on the stream of a running turn with its headers at once (it was never answered)', async () => {
      // The scripted model answers whichever request comes first: a turn of an earlier test still
      // on its way (slow in the distributed mode) would take the tool call meant for this task.
      await waitFor(async () => (await idle()) || undefined, 30_000, 'earlier tasks to settle');
      h.model.script({ toolCalls: [{ name: 'list_files', arguments: {} }] });
      const id = await newTask();
      await waitFor(async () => (await h.api(`/api/v1/tasks/${id}`)).body.data.status === 'awaiting_approval' || undefined, 30_000);
      const res = await rawExchange(h.url, [
        `HEAD /api/v1/tasks/${id}/stream HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${API_KEY}\r\n\r\n`,
      ]);
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toMatch(/^text\/event-stream/);
      expect(res.body).toBe('');
      await h.api(`/api/v1/tasks/${id}/cancel`, { method: 'POST' });
    });

    it('answers a multipart create whose last part, 20 KB without Content-Disposition, arrives with the closing boundary (busboy stalled on it)', async () => {
      const body = `--B\r\nContent-Disposition: form-data; name="message"\r\n\r\nhi\r\n--B\r\nContent-Disposition: form-data; name="autoExecute"\r\n\r\nfalse\r\n--B\r\nX-Note: no disposition\r\n\r\n${'x'.repeat(20_000)}\r\n--B--\r\n`;
      const head = `POST /api/v1/tasks HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${API_KEY}\r\nContent-Type: multipart/form-data; boundary=B\r\nContent-Length: ${body.length}\r\n\r\n`;
      const res = await rawExchange(h.url, [head + body], { waitMs: 5_000, waitForClose: false });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({ success: true, data: { id: expect.any(String), status: 'pending' } });
    });

    it('refuses a multipart boundary over 70 characters with 400 (one of 300 was a 500)', async () => {
      const b = 'b'.repeat(300);
      const res = await createRaw(
        `--${b}\r\nContent-Disposition: form-data; name="message"\r\n\r\nhi\r\n--${b}--\r\n`,
        `multipart/form-data; boundary=${b}`,
      );
      expect(res.status).toBe(400);
      expect(res.body).toEqual(envelope('VALIDATION_ERROR'));
      expect(res.body.error.message).toContain('boundary');
    });

    it('reads a multipart part sent as application/json as JSON: env as an object is taken, invalid JSON is a 400 (was a 500)', async () => {
      const part = (name: string, value: string, json = false) =>
        `--B\r\nContent-Disposition: form-data; name="${name}"\r\n${json ? 'Content-Type: application/json\r\n' : ''}\r\n${value}\r\n`;
      const ok = await createRaw(
        `${part('message', 'hi')}${part('autoExecute', 'false', true)}${part('env', '{"REGION":"eu"}', true)}--B--\r\n`,
        'multipart/form-data; boundary=B',
      );
      expect(ok.status).toBe(201);
      expect((await h.api(`/api/v1/tasks/${ok.body.data.id}`)).body.data).toMatchObject({ autoExecute: false, envKeys: ['REGION'] });
      for (const body of [
        `${part('message', 'not json', true)}--B--\r\n`,
        `${part('message', 'hi')}${part('env', '{"A":', true)}--B--\r\n`,
        `${part('message', '{"a":1}', true)}--B--\r\n`,
      ]) {
        const res = await createRaw(body, 'multipart/form-data; boundary=B');
        expect({ body, status: res.status, envelope: res.body }).toEqual({ body, status: 400, envelope: envelope('VALIDATION_ERROR') });
      }
    });
  });
});
