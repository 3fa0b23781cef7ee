import { mkdtemp, rm } from 'node:fs/promises';
import type { Server } from 'node:http';
import { createServer as createHttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createServer as createTcpServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BubblewrapProvider } from '../provider/bubblewrap/bubblewrap.provider';
import type { ExecResult } from '../provider/sandbox-provider.port';
import { TEST_LIMITS, taskIdFor, testSandboxConfig } from '../provider/testing/sandbox-provider.contract';
import { egressConfigFromEnv } from './egress.config';
import { createLocalTlsServer } from './testing/local-tls-server';

// SANDBOX_NETWORK=egress against real servers: the "internet" is a plain HTTP and an HTTPS server
// on 127.0.0.2 (a loopback address, so only SANDBOX_EGRESS_ALLOW_HOSTS lets the proxy reach
// them; 127.0.0.1, localhost and ::1 stay the sandbox's own through NO_PROXY), and a server that
// stands for the service's own port. Each attempt leaves the record it should.

jest.setTimeout(60_000);

const listen = (server: Server | ReturnType<typeof createTcpServer>, host: string) =>
  new Promise<number>((resolve) => server.listen(0, host, () => resolve((server.address() as AddressInfo).port)));

describe('egress through the proxy (bubblewrap, SANDBOX_NETWORK=egress)', () => {
  let dir: string;
  let web: Server;
  let tls: Server;
  let service: ReturnType<typeof createTcpServer>;
  let webPort: number;
  let tlsPort: number;
  let servicePort: number;
  let provider: BubblewrapProvider;
  const task = taskIdFor(31);

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ats-egress-'));
    web = createHttpServer((_req, res) => res.end('PLAIN-HTTP-BODY\n'));
    tls = createLocalTlsServer(dir, 'HTTPS-BODY\n');
    service = createTcpServer((socket) => socket.end('SERVICE-PORT\n'));
    [webPort, tlsPort, servicePort] = await Promise.all([listen(web, '127.0.0.2'), listen(tls, '127.0.0.2'), listen(service, '127.0.0.1')]);
    const egress = egressConfigFromEnv({ SANDBOX_EGRESS_ALLOW_HOSTS: `127.0.0.2:${webPort},127.0.0.2:${tlsPort}` });
    provider = new BubblewrapProvider(
      testSandboxConfig('bubblewrap', { ...TEST_LIMITS, timeoutMs: 15_000 }, { network: 'egress', egress }),
      join(dir, 'data'),
    );
  });
  afterAll(async () => {
    await provider.destroy(task);
    for (const server of [web, tls, service]) server.close();
    await rm(dir, { recursive: true, force: true });
  });

  const run = (command: string, egressAllow?: string[]): Promise<ExecResult> =>
    provider.exec(task, { command, env: {}, timeoutMs: 15_000, ...(egressAllow ? { egressAllow } : {}) });
  const allowed = (port: number) => ({
    host: '127.0.0.2',
    port,
    allowed: true,
    bytesOut: expect.any(Number),
    bytesIn: expect.any(Number),
    durationMs: expect.any(Number),
  });
  const refused = (host: string, port: number, reason: string | RegExp) => ({
    host,
    port,
    allowed: false,
    reason: typeof reason === 'string' ? `refused: ${reason}` : expect.stringMatching(reason),
    bytesOut: 0,
    bytesIn: 0,
    durationMs: expect.any(Number),
  });

  it('plain HTTP and an HTTPS CONNECT tunnel (as curl and pip make them) reach an allowed host, bytes counted', async () => {
    const result = await run(`curl -sS http://127.0.0.2:${webPort}/; curl -sS --insecure https://127.0.0.2:${tlsPort}/`);
    expect(result.output).toBe('PLAIN-HTTP-BODY\nHTTPS-BODY\n');
    expect(result.egress).toEqual([allowed(webPort), allowed(tlsPort)]);
    // The TLS handshake both ways, through the tunnel.
    for (const record of result.egress ?? []) expect(Math.min(record.bytesIn, record.bytesOut)).toBeGreaterThan(50);
  });

  it("Python's urllib (what pip's HTTP stack does: HTTPS_PROXY, a CONNECT tunnel) reaches an allowed host", async () => {
    const python =
      'import ssl, urllib.request; ' +
      `print(urllib.request.urlopen("https://127.0.0.2:${tlsPort}/", context=ssl._create_unverified_context(), timeout=10).read().decode(), end="")`;
    const result = await run(`python3 -c '${python}'`);
    expect(result.output).toBe('HTTPS-BODY\n');
    expect(result.egress).toEqual([allowed(tlsPort)]);
  });

  it("the service's own port, loopback in every spelling, private ranges, metadata and a name for loopback: refused, with the rule and no DNS answer", async () => {
    const targets = [
      ['127.0.0.1', servicePort],
      ['127.1', servicePort],
      ['0x7f000001', servicePort],
      ['[::1]', servicePort],
      ['[::ffff:127.0.0.1]', servicePort],
      ['10.0.0.1', 80],
      ['192.168.1.1', 80],
      ['169.254.169.254', 80],
      ['localhost', servicePort],
    ] as const;
    // --noproxy '': through the proxy even for names NO_PROXY keeps local; -p: as a CONNECT tunnel.
    const command = targets
      .map(([host, port]) => `curl -sS --noproxy '' -p --max-time 5 http://${host}:${port}/ 2>&1 | head -c 200; echo`)
      .join('; ');
    const result = await run(command);
    expect(result.output).not.toContain('SERVICE-PORT');
    expect(result.output).toMatch(/CONNECT tunnel failed, response 403/);
    const notPublic = 'not a public address (SANDBOX_EGRESS_ALLOW_HOSTS lists exceptions)';
    expect(result.egress).toEqual([
      refused('127.0.0.1', servicePort, notPublic),
      refused('127.0.0.1', servicePort, notPublic),
      refused('127.0.0.1', servicePort, notPublic),
      refused('[::1]', servicePort, notPublic),
      refused('[::ffff:7f00:1]', servicePort, notPublic),
      refused('10.0.0.1', 80, notPublic),
      refused('192.168.1.1', 80, notPublic),
      refused('169.254.169.254', 80, notPublic),
      refused('localhost', servicePort, notPublic),
    ]);
    expect(JSON.stringify(result.egress)).not.toMatch(/resolves to/);
  });

  it('a program that ignores the proxy gets no route at all', async () => {
    const result = await run(
      `exec 3<>/dev/tcp/127.0.0.2/${webPort} && echo REACHED-DIRECTLY; curl -sS --noproxy '*' --max-time 5 http://127.0.0.2:${webPort}/ 2>&1 | head -c 200`,
    );
    expect(result.output).not.toMatch(/REACHED-DIRECTLY|PLAIN-HTTP-BODY/);
    expect(result.output).toMatch(/Network is unreachable|Couldn't connect|Connection refused/);
    expect(result.egress).toEqual([]);
  });

  it("a task's network.allow: [] lets nothing out; a pattern lets out what it names and nothing else", async () => {
    const none = await run(`curl -sS http://127.0.0.2:${webPort}/ 2>&1 | head -c 200`, []);
    expect(none.output).not.toContain('PLAIN-HTTP-BODY');
    expect(none.egress).toEqual([refused('127.0.0.2', webPort, "not in the task's network.allow")]);
    const some = await run(`curl -sS http://127.0.0.2:${webPort}/; curl -sS --insecure https://127.0.0.2:${tlsPort}/ 2>&1 | head -c 200`, [
      `127.0.0.2:${webPort}`.replace('127.0.0.2', 'example.org'),
      '*.example.com',
    ]);
    expect(some.output).not.toMatch(/PLAIN-HTTP-BODY|HTTPS-BODY/);
    expect(some.egress).toEqual([
      refused('127.0.0.2', webPort, "not in the task's network.allow"),
      refused('127.0.0.2', tlsPort, "not in the task's network.allow"),
    ]);
  });

  it("a task's egress ends with its command: a connection still open is cut, and the next command's is its own", async () => {
    const slow = createHttpServer((_req, res) => {
      res.write('FIRST-PART\n');
      // The rest never comes: the connection is still open when the command ends.
    });
    const slowPort = await listen(slow, '127.0.0.2');
    const egress = egressConfigFromEnv({ SANDBOX_EGRESS_ALLOW_HOSTS: `127.0.0.2:${slowPort}` });
    const withSlow = new BubblewrapProvider(
      testSandboxConfig('bubblewrap', { ...TEST_LIMITS, timeoutMs: 15_000 }, { network: 'egress', egress }),
      join(dir, 'data'),
    );
    try {
      const result = await withSlow.exec(task, {
        command: `curl -sS --max-time 30 http://127.0.0.2:${slowPort}/ & sleep 1; echo gave-up`,
        env: {},
        timeoutMs: 15_000,
      });
      expect(result.output).toContain('gave-up');
      expect(result.egress).toEqual([{ ...allowed(slowPort), port: slowPort }]);
      expect(result.durationMs).toBeLessThan(10_000);
    } finally {
      await withSlow.close(); // its launcher for the next command, before afterAll's destroy
      slow.closeAllConnections();
      slow.close();
    }
  });
  it('bounds: connections past SANDBOX_EGRESS_MAX_CONNECTIONS at once are refused, and an idle one is closed after SANDBOX_EGRESS_IDLE_TIMEOUT_MS', async () => {
    const stalled = createHttpServer((_req, res) => res.write('STARTED\n')); // then nothing more
    const stalledPort = await listen(stalled, '127.0.0.2');
    const egress = egressConfigFromEnv({
      SANDBOX_EGRESS_ALLOW_HOSTS: `127.0.0.2:${stalledPort}`,
      SANDBOX_EGRESS_MAX_CONNECTIONS: '2',
      SANDBOX_EGRESS_IDLE_TIMEOUT_MS: '1000',
    });
    const bounded = new BubblewrapProvider(
      testSandboxConfig('bubblewrap', { ...TEST_LIMITS, timeoutMs: 15_000 }, { network: 'egress', egress }),
      join(dir, 'data'),
    );
    try {
      // Two connections held open, then a third while they are: refused. Each open one goes idle and is closed.
      const command =
        `curl -sS --max-time 10 http://127.0.0.2:${stalledPort}/a & curl -sS --max-time 10 http://127.0.0.2:${stalledPort}/b & ` +
        `sleep 0.5; curl -sS --max-time 10 http://127.0.0.2:${stalledPort}/c 2>&1 | head -c 200; wait`;
      const started = Date.now();
      const result = await bounded.exec(task, { command, env: {}, timeoutMs: 15_000 });
      expect(Date.now() - started).toBeLessThan(8_000); // the idle bound ended them, not curl's 10 s
      const records = result.egress ?? [];
      expect(records.filter((r) => r.allowed)).toHaveLength(2);
      expect(records.filter((r) => !r.allowed)).toEqual([
        refused('127.0.0.2', stalledPort, "the task's connection limit (SANDBOX_EGRESS_MAX_CONNECTIONS) is reached"),
      ]);
      for (const r of records.filter((x) => x.allowed)) {
        expect(r.durationMs).toBeGreaterThanOrEqual(1_000);
        expect(r.bytesIn).toBeGreaterThan(0);
      }
    } finally {
      await bounded.close();
      stalled.closeAllConnections();
      stalled.close();
    }
  });
});
