import { performance } from 'node:perf_hooks';
import { taskStreamId } from '@app/common';
import type { InProcessService } from './lib/in-process-service';
import { SseRecorder } from './lib/sse-recorder';
import type { Summary } from './lib/stats';
import { summarize } from './lib/stats';
import { sleep } from './lib/timing';

export interface SseFanoutFigures {
  readonly subscribers: number;
  readonly appends: number;
  readonly intervalMs: number;
  /** Append start → arrival, over every (client, event) pair. */
  readonly latency: Summary;
  /** Diagnostics. One `execute()` call (read tail → decide → append → return). */
  readonly appendCall: Summary;
  /** Per event: append start → the store's onAppended dispatch; → first client; → last client. */
  readonly toDispatch: Summary;
  readonly toFirstClient: Summary;
  readonly toLastClient: Summary;
  readonly completeClients: number;
  readonly missing: number;
  readonly duplicates: number;
  readonly outOfOrder: number;
  /** Every client got every appended id exactly once, and its whole stream in order without gaps. */
  readonly exactlyOnce: boolean;
}

export interface SseFanoutOptions {
  readonly subscribers: number;
  readonly appends: number;
  readonly intervalMs: number;
  readonly log: (line: string) => void;
}

/**
 * Benchmark 2: with N SSE clients on a running task, append follow-ups at a fixed interval
 * through the command executor and time each event from just before its append to its arrival
 * at each client.
 */
export async function benchSseFanout(service: InProcessService, options: SseFanoutOptions): Promise<SseFanoutFigures> {
  const { id: taskId, lastEventId: base } = await service.createHangingTask();
  // The default stream: replays the running turn from its first event, then follows live.
  const url = `${service.url}/api/v1/tasks/${taskId}/stream`;
  const clients = Array.from({ length: options.subscribers }, () => new SseRecorder(url, service.api.authHeader));
  // When the store hands each event of this task to its listeners (ours is subscribed last).
  const dispatchedAt = new Map<number, number>();
  const streamId = taskStreamId(taskId);
  const stopObserving = service.store.onAppended((events) => {
    const now = performance.now();
    for (const e of events) if (e.streamId === streamId) dispatchedAt.set(e.revision, now);
  });
  try {
    options.log(`sse: opening ${options.subscribers} streams on ${taskId}`);
    await Promise.all(clients.map((c) => c.open(15_000)));
    await Promise.all(clients.map((c) => c.waitFor(base, 15_000)));

    options.log(`sse: appending ${options.appends} events, one every ${options.intervalMs} ms`);
    const appendStart = new Map<number, number>();
    const appendCall: number[] = [];
    const t0 = performance.now();
    const deadline = Date.now() + options.appends * options.intervalMs * 3 + 30_000;
    for (let i = 1; i <= options.appends; i++) {
      if (Date.now() > deadline) throw new Error(`appends took too long: ${i - 1} of ${options.appends} done`);
      const due = t0 + (i - 1) * options.intervalMs;
      const wait = due - performance.now();
      if (wait >= 1) await sleep(Math.floor(wait));
      const expected = base + i;
      const started = performance.now();
      appendStart.set(expected, started);
      const revision = await service.appendFollowUp(taskId);
      appendCall.push(performance.now() - started);
      if (revision !== expected)
        throw new Error(`append ${i} got revision ${revision}, expected ${expected}: something else wrote to the task`);
    }
    const last = base + options.appends;
    await Promise.allSettled(clients.map((c) => c.waitFor(last, 15_000)));

    const latencies: number[] = [];
    const firstByRev = new Map<number, number>();
    const lastByRev = new Map<number, number>();
    let missing = 0;
    let duplicates = 0;
    let outOfOrder = 0;
    let completeClients = 0;
    for (const client of clients) {
      let complete = true;
      for (let rev = base + 1; rev <= last; rev++) {
        const at = client.receivedAt.get(rev);
        if (at === undefined) {
          missing++;
          complete = false;
          continue;
        }
        latencies.push(at - appendStart.get(rev)!);
        firstByRev.set(rev, Math.min(firstByRev.get(rev) ?? Infinity, at));
        lastByRev.set(rev, Math.max(lastByRev.get(rev) ?? -Infinity, at));
      }
      duplicates += client.duplicates.length;
      for (let k = 1; k < client.order.length; k++) if (client.order[k] !== client.order[k - 1] + 1) outOfOrder++;
      if (complete && client.duplicates.length === 0) completeClients++;
    }
    const since = (times: Map<number, number>) => [...times].map(([rev, at]) => at - appendStart.get(rev)!);
    return {
      subscribers: options.subscribers,
      appends: options.appends,
      intervalMs: options.intervalMs,
      latency: summarize(latencies),
      appendCall: summarize(appendCall),
      toDispatch: summarize(since(new Map([...dispatchedAt].filter(([rev]) => appendStart.has(rev))))),
      toFirstClient: summarize(since(firstByRev)),
      toLastClient: summarize(since(lastByRev)),
      completeClients,
      missing,
      duplicates,
      outOfOrder,
      exactlyOnce: missing === 0 && duplicates === 0 && outOfOrder === 0 && completeClients === clients.length,
    };
  } finally {
    stopObserving();
    for (const client of clients) client.close();
    await service.api.cancel(taskId).catch((error: unknown) => options.log(`sse: cancel failed: ${String(error)}`));
  }
}
