import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { Webhook } from 'standardwebhooks';
import type { WebhookReceiver } from './testing/webhook-receiver';
import { startWebhookReceiver } from './testing/webhook-receiver';
import type { WebhookMessage } from './webhook-sender';
import { MAX_RESPONSE_BYTES, WebhookSender } from './webhook-sender';

// Against real HTTP receivers on 127.0.0.1, which only WEBHOOK_ALLOW_HOSTS lets the sender reach.

const key = randomBytes(32);
const secret = `whsec_${key.toString('base64')}`;
const body = JSON.stringify({
  type: 'task.completed',
  timestamp: new Date().toISOString(),
  data: { taskId: 'task_1', status: 'completed', turn: 1 },
});
const message = (url: string, id = 'msg_1'): WebhookMessage => ({ id, url: new URL(url), body });
const allowing = (...receivers: WebhookReceiver[]) => new Set(receivers.map((r) => `127.0.0.1:${r.port}`));

const open: Array<{ close(): Promise<void> }> = [];
function sender(allowHosts: ReadonlySet<string>, timeoutMs = 2_000): WebhookSender {
  const created = new WebhookSender({ allowHosts, timeoutMs, maxConnections: 8 }, key);
  open.push(created);
  return created;
}
/**
 * A sender whose worker thread is already up (one message delivered to a receiver of its own): a
 * test timing an attempt then times the attempt, not the worker's start (which loads ts-node here,
 * a second or more on a busy machine).
 */
async function startedSender(site: WebhookReceiver, timeoutMs: number): Promise<WebhookSender> {
  const other = await receiver((_, res) => res.writeHead(200).end());
  const started = sender(allowing(site, other), timeoutMs);
  expect((await started.send(message(other.origin, 'msg_warm-up'))).delivered).toBe(true);
  return started;
}
async function receiver(answer: Parameters<typeof startWebhookReceiver>[0]): Promise<WebhookReceiver> {
  const started = await startWebhookReceiver(answer);
  open.push(started);
  return started;
}
afterEach(async () => {
  await Promise.all(open.splice(0).map((o) => o.close()));
});

describe('WebhookSender against a real receiver', () => {
  it('delivers on a 2xx, with headers the receiver verifies with standardwebhooks', async () => {
    const site = await receiver((_, res) => res.writeHead(204).end());
    const before = Date.now();
    const { attempt, delivered } = await sender(allowing(site)).send(message(`${site.origin}/hooks/agent?src=ats`, 'msg_delivered'));

    expect(delivered).toBe(true);
    expect(attempt).toEqual({ at: expect.any(String), statusCode: 204, durationMs: expect.any(Number) });
    expect(Date.parse(attempt.at)).toBeGreaterThanOrEqual(before - 1);
    expect(site.received).toHaveLength(1);
    const [got] = site.received;
    expect(got).toMatchObject({ method: 'POST', url: '/hooks/agent?src=ats', body });
    expect(got.headers['content-type']).toBe('application/json');
    expect(got.headers['webhook-id']).toBe('msg_delivered');
    expect(Number(got.headers['webhook-timestamp'])).toBe(Math.floor(Date.parse(attempt.at) / 1000));
    const verified = new Webhook(secret).verify(got.body, got.headers as Record<string, string>);
    expect(verified).toEqual(JSON.parse(body));
  });

  it('does not deliver on a 500, and says what the receiver answered', async () => {
    const site = await receiver((_, res) => res.writeHead(500, { 'content-type': 'text/plain' }).end('receiver broke'));
    const { attempt, delivered } = await sender(allowing(site)).send(message(site.origin));
    expect(delivered).toBe(false);
    expect(attempt).toMatchObject({ statusCode: 500, error: 'the receiver answered 500' });
    expect(site.received).toHaveLength(1);
  });

  it('gives up on a receiver that never answers within WEBHOOK_TIMEOUT_MS', async () => {
    const site = await receiver(() => undefined);
    const { attempt, delivered } = await (await startedSender(site, 400)).send(message(site.origin));
    expect(delivered).toBe(false);
    expect(attempt.statusCode).toBeUndefined();
    expect(attempt.error).toBe('timed out after 400 ms (the WEBHOOK_TIMEOUT_MS limit)');
    expect(attempt.durationMs).toBeGreaterThanOrEqual(390);
    expect(attempt.durationMs).toBeLessThan(1_400);
    expect(site.received).toHaveLength(1);
  });

  it('bounds a receiver that sends its headers and then trickles its body: the answer is its status', async () => {
    const site = await receiver((_, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('a');
      const drip = setInterval(() => res.write('a'), 50);
      res.on('close', () => clearInterval(drip));
    });
    const ready = await startedSender(site, 400);
    const started = Date.now();
    const { attempt, delivered } = await ready.send(message(site.origin));
    expect(Date.now() - started).toBeLessThan(1_400);
    expect(attempt.statusCode).toBe(200);
    expect(delivered).toBe(true);
  });

  it('does not follow a redirect: the attempt fails saying so, and the target receives nothing', async () => {
    const target = await receiver((_, res) => res.writeHead(200).end());
    const site = await receiver((_, res) => res.writeHead(302, { location: `${target.origin}/elsewhere` }).end());
    const { attempt, delivered } = await sender(allowing(site, target)).send(message(site.origin));
    expect(delivered).toBe(false);
    expect(attempt.statusCode).toBe(302);
    expect(attempt.error).toMatch(/^the receiver answered 302, a redirect, which is not followed/);
    await new Promise((r) => setTimeout(r, 100));
    expect(target.received).toHaveLength(0);
  });

  it('reads no more than MAX_RESPONSE_BYTES of an endless answer, then drops the connection', async () => {
    let written = 0;
    let dropped: Promise<void> = Promise.reject(new Error('no request'));
    dropped.catch(() => undefined);
    const site = await receiver((_, res) => {
      dropped = new Promise((resolve) => res.on('close', resolve));
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      pour(res, (n) => (written += n));
    });
    const { attempt, delivered } = await (await startedSender(site, 5_000)).send(message(site.origin));
    expect(delivered).toBe(true);
    expect(attempt.statusCode).toBe(200);
    expect(attempt.durationMs).toBeLessThan(2_000);
    await dropped;
    // What was written before the drop sat in socket buffers, not in the sender: a few MiB at most.
    expect(written).toBeGreaterThan(MAX_RESPONSE_BYTES);
    expect(written).toBeLessThan(32 * 1024 * 1024);
  });

  it('reports a receiver that refuses the connection as a failed attempt', async () => {
    const site = await receiver(() => undefined);
    const allowHosts = allowing(site);
    await site.close();
    const { attempt, delivered } = await sender(allowHosts).send(message(site.origin));
    expect(delivered).toBe(false);
    expect(attempt.statusCode).toBeUndefined();
    expect(attempt.error).toMatch(/^could not deliver: .*ECONNREFUSED/);
  });
});

describe('WebhookSender and private addresses', () => {
  it('refuses 127.0.0.1 unless its host:port is in WEBHOOK_ALLOW_HOSTS', async () => {
    const site = await receiver((_, res) => res.writeHead(200).end());
    const otherPort = new Set([`127.0.0.1:${site.port + 1}`]);
    const { attempt, delivered } = await sender(otherPort).send(message(site.origin));
    expect(delivered).toBe(false);
    expect(attempt.error).toBe(
      'refused: 127.0.0.1 is a loopback address; only public addresses are reached (hosts in WEBHOOK_ALLOW_HOSTS excepted)',
    );
    expect(site.received).toHaveLength(0);
  });

  it('refuses a name that resolves to loopback, judged on the address the socket would connect to, without saying the address', async () => {
    const site = await receiver((_, res) => res.writeHead(200).end());
    const { attempt, delivered } = await sender(allowing(site)).send(message(`http://localhost:${site.port}/`));
    expect(delivered).toBe(false);
    expect(attempt.error).toBe(
      'refused: localhost is not a public address; only public addresses are reached (hosts in WEBHOOK_ALLOW_HOSTS excepted)',
    );
    expect(site.received).toHaveLength(0);
  });

  it('refuses a URL that is not http or https', async () => {
    const { attempt, delivered } = await sender(new Set()).send(message('ftp://hooks.example/'));
    expect(delivered).toBe(false);
    expect(attempt.error).toBe('refused: ftp: URLs are not called; only http and https');
  });

  it('refuses a URL with credentials in it, sending nothing', async () => {
    const site = await receiver((_, res) => res.writeHead(200).end());
    const { attempt, delivered } = await sender(allowing(site)).send(message(`http://user:pw@127.0.0.1:${site.port}/`));
    expect(delivered).toBe(false);
    expect(attempt.error).toBe('refused: URLs with credentials (user:password@) are not called');
    expect(site.received).toHaveLength(0);
  });
});

// Writes as fast as the connection takes it, forever, counting bytes, until the response closes.
function pour(res: ServerResponse, count: (bytes: number) => void): void {
  const chunk = Buffer.alloc(64 * 1024, 0x61);
  const more = () => {
    while (!res.destroyed) {
      count(chunk.length);
      if (!res.write(chunk)) return void res.once('drain', more);
    }
  };
  more();
}
