import { mkdtemp, rm } from 'node:fs/promises';
import type { Server } from 'node:http';
import { createServer as createHttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Harness } from '../../../test/support/service-harness';
import { API_KEY, startHarness } from '../../../test/support/service-harness';
import type { SseEvent } from '../../../test/support/sse-client';
import { ALL_EVENT_KINDS, followStream } from '../../../test/support/sse-client';
import { createLocalTlsServer } from '../src/egress/testing/local-tls-server';

// SANDBOX_NETWORK=egress through the whole service (and, in e2e-distributed, sandbox instances
// over NATS): the "internet" is an HTTP and an HTTPS server on 127.0.0.2, reached only because
// SANDBOX_EGRESS_ALLOW_HOSTS names them. Every connection is an `egress` event, on the stream and
// in the history, right before the result of the call that made it.

jest.setTimeout(120_000);

const listen = (server: Server) =>
  new Promise<number>((resolve) => server.listen(0, '127.0.0.2', () => resolve((server.address() as AddressInfo).port)));

describe('egress through the whole service (bubblewrap, SANDBOX_NETWORK=egress)', () => {
  let h: Harness;
  let dir: string;
  let web: Server;
  let tls: Server;
  let webPort: number;
  let tlsPort: number;
  let servicePort: number;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ats-egress-e2e-'));
    web = createHttpServer((_req, res) => res.end('PLAIN-HTTP-BODY\n'));
    tls = createLocalTlsServer(dir, 'HTTPS-BODY\n');
    [webPort, tlsPort] = await Promise.all([listen(web), listen(tls)]);
    h = await startHarness({
      SANDBOX_NETWORK: 'egress',
      SANDBOX_EGRESS_ALLOW_HOSTS: `127.0.0.2:${webPort},127.0.0.2:${tlsPort}`,
      SANDBOX_TIMEOUT_MS: '30000',
    });
    servicePort = Number(new URL(h.url).port);
  });
  afterAll(async () => {
    await h?.close();
    for (const server of [web, tls]) server?.close();
    await rm(dir, { recursive: true, force: true });
  });

  const shell = (command: string) => ({ toolCalls: [{ name: 'shell', arguments: { command } }] });

  /** Creates a task (JSON) that runs `command` once, and follows its whole stream to the end. */
  async function runTask(command: string, fields: Record<string, unknown> = {}): Promise<{ id: string; events: SseEvent[] }> {
    h.model.script(shell(command), { text: 'done' });
    const created = await h.api('/api/v1/tasks', { method: 'POST', json: { message: 'go', ...fields } });
    expect(created.status).toBe(201);
    const id = created.body.data.id as string;
    const events = await followStream(`${h.url}/api/v1/tasks/${id}/stream`, API_KEY, { kinds: ALL_EVENT_KINDS, timeoutMs: 90_000 });
    return { id, events };
  }
  const egressOf = (events: SseEvent[]) => events.filter((e) => e.kind === 'egress').map((e) => e.payload.data);
  const outputOf = (events: SseEvent[]) => String(events.find((e) => e.kind === 'tool_result')?.payload.data.output);
  const allowed = (port: number) => ({
    callId: expect.any(String),
    host: '127.0.0.2',
    port,
    allowed: true,
    bytesOut: expect.any(Number),
    bytesIn: expect.any(Number),
    durationMs: expect.any(Number),
  });
  const refused = (host: string, port: number, reason: string) => ({
    callId: expect.any(String),
    host,
    port,
    allowed: false,
    reason: `refused: ${reason}`,
    bytesOut: 0,
    bytesIn: 0,
    durationMs: expect.any(Number),
  });
  const NOT_PUBLIC = 'not a public address (SANDBOX_EGRESS_ALLOW_HOSTS lists exceptions)';

  it("curl over HTTP and over an HTTPS CONNECT tunnel reaches an allowed host; each connection is an egress event before the call's result, in the history too", async () => {
    const { id, events } = await runTask(`curl -sS http://127.0.0.2:${webPort}/; curl -sS --insecure https://127.0.0.2:${tlsPort}/`);
    expect(outputOf(events)).toBe('PLAIN-HTTP-BODY\nHTTPS-BODY\n');
    expect(egressOf(events)).toEqual([allowed(webPort), allowed(tlsPort)]);
    const call = events.find((e) => e.kind === 'tool_result');
    for (const e of events.filter((x) => x.kind === 'egress')) {
      expect(e.payload.data.callId).toBe(call?.payload.data.callId);
      expect(e.id).toBeLessThan(call?.id ?? 0);
      expect(Number(e.payload.data.bytesIn)).toBeGreaterThan(0);
    }
    const history = await h.api(`/api/v1/tasks/${id}/events?limit=100`);
    expect(history.status).toBe(200);
    const recorded = (history.body.data.events ?? history.body.data).filter(
      (e: { kind?: string; type?: string }) => (e.kind ?? e.type) === 'egress',
    );
    expect(recorded).toHaveLength(2);
    const task = await h.api(`/api/v1/tasks/${id}`);
    expect(task.body.data.network).toBeNull();
  });

  it("the service's own port, loopback in every spelling, private and metadata addresses and a name for loopback are refused, with the rule and no DNS answer", async () => {
    const targets = [
      ['127.0.0.1', servicePort],
      ['127.1', servicePort],
      ['0x7f000001', servicePort],
      ['[::1]', servicePort],
      ['[::ffff:127.0.0.1]', servicePort],
      ['127.0.0.1', 4222],
      ['10.0.0.1', 80],
      ['172.16.0.1', 80],
      ['192.168.1.1', 80],
      ['169.254.169.254', 80],
      ['localhost', servicePort],
    ] as const;
    // --noproxy '': through the proxy even for the names NO_PROXY keeps inside; -p: as a CONNECT tunnel.
    const command = targets
      .map(([host, port]) => `curl -sS --noproxy '' -p --max-time 5 http://${host}:${port}/ 2>&1 | head -c 200; echo`)
      .join('; ');
    const { events } = await runTask(command);
    expect(outputOf(events)).not.toMatch(/"success"|NATS|INFO \{/);
    expect(outputOf(events)).toMatch(/CONNECT tunnel failed, response 403/);
    expect(egressOf(events)).toEqual([
      refused('127.0.0.1', servicePort, NOT_PUBLIC),
      refused('127.0.0.1', servicePort, NOT_PUBLIC),
      refused('127.0.0.1', servicePort, NOT_PUBLIC),
      refused('[::1]', servicePort, NOT_PUBLIC),
      refused('[::ffff:7f00:1]', servicePort, NOT_PUBLIC),
      refused('127.0.0.1', 4222, NOT_PUBLIC),
      refused('10.0.0.1', 80, NOT_PUBLIC),
      refused('172.16.0.1', 80, NOT_PUBLIC),
      refused('192.168.1.1', 80, NOT_PUBLIC),
      refused('169.254.169.254', 80, NOT_PUBLIC),
      refused('localhost', servicePort, NOT_PUBLIC),
    ]);
    expect(JSON.stringify(events)).not.toMatch(/resolves to/);
  });

  it('a program that ignores the proxy gets no route, and leaves no egress event', async () => {
    const { events } = await runTask(
      `exec 3<>/dev/tcp/127.0.0.2/${webPort} && echo REACHED-DIRECTLY; curl -sS --noproxy '*' --max-time 5 http://127.0.0.2:${webPort}/ 2>&1 | head -c 200`,
    );
    expect(outputOf(events)).not.toMatch(/REACHED-DIRECTLY|PLAIN-HTTP-BODY/);
    expect(outputOf(events)).toMatch(/Network is unreachable|Couldn't connect|Connection refused/);
    expect(egressOf(events)).toEqual([]);
  });

  it('network.allow: [] lets nothing out (JSON create); GET shows the field', async () => {
    const { id, events } = await runTask(`curl -sS http://127.0.0.2:${webPort}/ 2>&1 | head -c 200`, { network: { allow: [] } });
    expect(outputOf(events)).not.toContain('PLAIN-HTTP-BODY');
    expect(egressOf(events)).toEqual([refused('127.0.0.2', webPort, "not in the task's network.allow")]);
    expect((await h.api(`/api/v1/tasks/${id}`)).body.data.network).toEqual({ allow: [] });
  });

  it('network.allow in a multipart create: the pattern it names gets out, another host does not', async () => {
    h.model.script(shell(`curl -sS http://127.0.0.2:${webPort}/; curl -sS --max-time 5 http://127.0.0.2:${tlsPort}/ 2>&1 | head -c 200`), {
      text: 'done',
    });
    const form = new FormData();
    form.set('message', 'go');
    form.set('network', JSON.stringify({ allow: [`127.0.0.2:${webPort}`] }));
    const res = await fetch(`${h.url}/api/v1/tasks`, { method: 'POST', body: form, headers: { authorization: `Bearer ${API_KEY}` } });
    expect(res.status).toBe(201);
    const id = ((await res.json()) as { data: { id: string } }).data.id;
    const events = await followStream(`${h.url}/api/v1/tasks/${id}/stream`, API_KEY, { kinds: ALL_EVENT_KINDS, timeoutMs: 90_000 });
    expect(outputOf(events)).toContain('PLAIN-HTTP-BODY');
    expect(egressOf(events)).toEqual([allowed(webPort), refused('127.0.0.2', tlsPort, "not in the task's network.allow")]);
  });

  it('a secret in a host name never reaches the egress event in plain text', async () => {
    const secret = 'sk-egress-secret-value-1234';
    const { events } = await runTask('curl -sS --max-time 5 "http://$TOKEN.invalid/" 2>&1 | head -c 200', { secrets: { TOKEN: secret } });
    const [record] = egressOf(events);
    expect(record).toMatchObject({ allowed: false, reason: 'refused: the name does not resolve' });
    expect(JSON.stringify(events)).not.toContain(secret);
  });

  it('a bad network field is refused before anything is recorded', async () => {
    const bad = await h.api('/api/v1/tasks', { method: 'POST', json: { message: 'go', network: { allow: ['https://pypi.org/'] } } });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ success: false, error: { code: 'VALIDATION_ERROR' } });
    expect(bad.body.error.message).toContain('network.allow[0]: "https://pypi.org/" is not a host pattern');
  });
});
