import { Agent, request } from 'node:http';
import { performance } from 'node:perf_hooks';
import { sleep } from './timing';
import type { LoadOptions, LoadResult } from './autocannon-run';

/**
 * An open-loop load generator that spreads requests evenly (one every 1000/rate ms) over at most
 * `connections` keep-alive sockets, unlike autocannon's rate limit, which lets each connection send
 * its whole per-second quota back to back at the start of every second. Latency is measured from
 * each request's scheduled send time, so any lag of the generator itself counts against the result.
 */
export async function runPaced(options: LoadOptions): Promise<LoadResult> {
  const agent = new Agent({ keepAlive: true, maxSockets: options.connections });
  const target = new URL(options.url);
  const latencies2xx: number[] = [];
  const statusCodes: Record<string, number> = {};
  let responses = 0;
  let non2xx = 0;
  let errors = 0;
  let timeouts = 0;
  let inFlight = 0;
  let lastResponseAt = 0;
  const interval = 1000 / options.overallRate;
  const total = Math.round(options.overallRate * options.durationS);
  const body = Buffer.from(options.body);
  const start = performance.now();

  const fire = (scheduled: number): void => {
    inFlight++;
    const req = request(
      {
        host: target.hostname,
        port: target.port,
        path: target.pathname,
        method: 'POST',
        agent,
        timeout: 10_000,
        headers: { ...options.headers, 'content-length': body.length },
      },
      (res) => {
        res.resume();
        res.on('end', () => {
          inFlight--;
          responses++;
          lastResponseAt = performance.now();
          const status = res.statusCode ?? 0;
          statusCodes[status] = (statusCodes[status] ?? 0) + 1;
          if (status >= 200 && status < 300) latencies2xx.push(performance.now() - scheduled);
          else non2xx++;
        });
      },
    );
    req.on('timeout', () => {
      timeouts++;
      req.destroy(new Error('timeout'));
    });
    req.on('error', () => {
      inFlight--;
      errors++;
    });
    req.end(body);
  };

  let sent = 0;
  while (sent < total) {
    const now = performance.now();
    // Fire everything that is due (timers have ~1 ms granularity), then sleep until the next one.
    while (sent < total && start + sent * interval <= now) fire(start + sent++ * interval);
    const next = start + sent * interval - performance.now();
    if (next > 0) await sleep(Math.max(0, Math.floor(next)));
    else await new Promise((resolve) => setImmediate(resolve));
  }
  const drainDeadline = Date.now() + 15_000;
  while (inFlight > 0 && Date.now() < drainDeadline) await sleep(10);
  agent.destroy();
  return {
    latencies2xx,
    responses,
    non2xx,
    statusCodes,
    errors,
    timeouts,
    unanswered: inFlight,
    // First scheduled send to last response: a service that falls behind shows a lower rate.
    durationS: (Math.max(lastResponseAt, start + total * interval) - start) / 1000,
  };
}
