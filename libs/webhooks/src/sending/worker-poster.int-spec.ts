import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import type { Worker } from 'node:worker_threads';
import type { WebhookReceiver } from '../testing/webhook-receiver';
import { startWebhookReceiver } from '../testing/webhook-receiver';
import { WorkerPoster } from './worker-poster';

// WorkerPoster makes its POSTs on a worker thread, so they go out while the service's own event
// loop is busy. The receivers are real HTTP servers; the one that times arrivals runs in its own
// process, so that blocking this thread does not block it too.

const ARRIVALS_RECEIVER = `
const server = require('node:http').createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    res.writeHead(200).end();
    process.stdout.write(JSON.stringify({ id: req.headers['x-id'], at: performance.timeOrigin + performance.now() }) + '\\n');
  });
});
server.listen(0, '127.0.0.1', () => process.stdout.write(JSON.stringify({ port: server.address().port }) + '\\n'));`;

interface ArrivalsReceiver {
  readonly port: number;
  readonly arrivals: Array<{ id: string; at: number }>;
  readonly child: ChildProcess;
}

async function startArrivalsReceiver(): Promise<ArrivalsReceiver> {
  const child = spawn(process.execPath, ['-e', ARRIVALS_RECEIVER], { stdio: ['ignore', 'pipe', 'inherit'] });
  const arrivals: Array<{ id: string; at: number }> = [];
  let buffered = '';
  const port = await new Promise<number>((resolve) =>
    child.stdout!.on('data', (chunk: Buffer) => {
      buffered += chunk.toString('utf8');
      const lines = buffered.split('\n');
      buffered = lines.pop()!;
      for (const line of lines) {
        const parsed = JSON.parse(line) as { port?: number; id?: string; at?: number };
        if (parsed.port !== undefined) resolve(parsed.port);
        else arrivals.push({ id: parsed.id!, at: parsed.at! });
      }
    }),
  );
  return { port, arrivals, child };
}

const open: Array<() => unknown> = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((close) => close()));
});

function poster(allowHosts: string[], timeoutMs = 2_000): WorkerPoster {
  const created = new WorkerPoster({ timeoutMs, allowHosts, maxConnections: 4, pipelining: 16 });
  open.push(() => created.close());
  return created;
}

const busyFor = (ms: number) => {
  const until = performance.now() + ms;
  while (performance.now() < until);
  return performance.timeOrigin + performance.now();
};

describe('WorkerPoster', () => {
  it('gets a burst of POSTs to the receiver while the calling thread is blocked', async () => {
    const receiver = await startArrivalsReceiver();
    open.push(() => receiver.child.kill());
    const posting = poster([`127.0.0.1:${receiver.port}`]);
    const url = `http://127.0.0.1:${receiver.port}/hook`;
    // The worker is started and its sockets are open: as in a running service.
    await Promise.all(Array.from({ length: 4 }, (_, i) => posting.post({ url, headers: { 'x-id': `warm-${i}` }, body: '{}' })));

    const results = Array.from({ length: 40 }, (_, i) => posting.post({ url, headers: { 'x-id': `burst-${i}` }, body: '{}' }));
    // Handed to the worker once this synchronous run's microtasks are done: then this thread is busy for 1.5 s.
    await Promise.resolve();
    const blockedUntil = busyFor(1_500);

    expect((await Promise.all(results)).every((r) => r.statusCode === 200 && r.error === undefined)).toBe(true);
    // The receiver reports each arrival on its stdout, which this thread reads once it is free again.
    const burst = () => receiver.arrivals.filter((a) => a.id.startsWith('burst-'));
    await waitFor(() => burst().length === 40);
    // Every one arrived while this thread could not have sent anything.
    expect(Math.max(...burst().map((a) => a.at))).toBeLessThan(blockedUntil);
  });

  it('fails the POSTs a dead worker held, and starts a new worker for the next', async () => {
    const silent = await startWebhookReceiver(() => undefined); // never answers
    const answering = await startWebhookReceiver((_, res) => res.writeHead(204).end());
    open.push(
      () => silent.close(),
      () => answering.close(),
    );
    const posting = poster([`127.0.0.1:${silent.port}`, `127.0.0.1:${answering.port}`], 10_000);

    const held = posting.post({ url: `${silent.origin}/hook`, headers: {}, body: '{}' });
    await waitFor(() => silent.received.length === 1);
    await (posting as unknown as { worker: Worker }).worker.terminate();

    expect(await held).toEqual({ error: expect.stringMatching(/^could not deliver: the webhook sender's worker stopped/) });
    expect(await posting.post({ url: `${answering.origin}/hook`, headers: {}, body: '{}' })).toEqual({ statusCode: 204 });
  });

  it('closes: its worker ends, and a POST after close fails without being sent', async () => {
    const site: WebhookReceiver = await startWebhookReceiver((_, res) => res.writeHead(200).end());
    open.push(() => site.close());
    const posting = poster([`127.0.0.1:${site.port}`]);
    expect(await posting.post({ url: `${site.origin}/a`, headers: {}, body: '{}' })).toEqual({ statusCode: 200 });
    const worker = (posting as unknown as { worker: Worker }).worker;
    const exited = new Promise((resolve) => worker.once('exit', resolve));

    await posting.close();

    await exited;
    expect(await posting.post({ url: `${site.origin}/b`, headers: {}, body: '{}' })).toEqual({ error: 'the webhook sender is closed' });
    expect(site.received.map((r) => r.url)).toEqual(['/a']);
  });
});

describe('WorkerPoster closed in the same tick as a POST', () => {
  it('fails that POST and starts no worker', async () => {
    const posting = new WorkerPoster({ timeoutMs: 1_000, allowHosts: [], maxConnections: 1, pipelining: 1 });
    const result = posting.post({ url: 'http://127.0.0.1:9/never', headers: {}, body: '{}' });
    await posting.close();

    expect(await result).toEqual({ error: 'the webhook sender is closed' });
    expect((posting as unknown as { worker?: Worker }).worker).toBeUndefined();
  });
});

async function waitFor(done: () => boolean, timeoutMs = 5_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > until) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
