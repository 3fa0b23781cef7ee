import { performance } from 'node:perf_hooks';
import type { InProcessService } from './lib/in-process-service';
import { SseRecorder } from './lib/sse-recorder';
import { median } from './lib/stats';

export interface ReplayFigures {
  readonly events: number;
  readonly lastId: number;
  readonly runsMs: number[];
  readonly minMs: number;
  readonly medianMs: number;
  readonly maxMs: number;
  /** Time to the response headers, median over the runs. In-process this is not meaningful: the
   * client only reads when the server yields to the event loop's poll phase. */
  readonly headersMedianMs: number;
  /** Bytes of one replay (the last run). */
  readonly bytes: number;
  /** Every run received ids 1 … last exactly once, in order. */
  readonly complete: boolean;
  /** How long filling the stream took (not a measured figure; for context). */
  readonly fillMs: number;
}

export interface ReplayOptions {
  readonly events: number;
  readonly runs: number;
  readonly log: (line: string) => void;
}

/** Benchmark 3: replay (`?after=0`) of a task stream of ~`events` events over a raw HTTP client. */
export async function benchReplay(service: InProcessService, options: ReplayOptions): Promise<ReplayFigures> {
  const { id: taskId, lastEventId: base } = await service.createHangingTask();
  try {
    options.log(`replay: filling ${taskId} with ${options.events} events`);
    const fillStart = performance.now();
    const fillDeadline = Date.now() + 600_000;
    let lastId = base;
    for (let i = 0; i < options.events; i++) {
      if (Date.now() > fillDeadline) throw new Error(`filling the stream took over 600 s (${i} of ${options.events})`);
      lastId = await service.appendFollowUp(taskId);
      if (i > 0 && i % 2000 === 0) options.log(`replay: ${i} appended`);
    }
    const fillMs = performance.now() - fillStart;
    if (lastId !== base + options.events) throw new Error(`last id ${lastId}, expected ${base + options.events}`);

    const runsMs: number[] = [];
    const headers: number[] = [];
    let complete = true;
    let bytes = 0;
    for (let run = 1; run <= options.runs; run++) {
      const client = new SseRecorder(`${service.url}/api/v1/tasks/${taskId}/stream?after=0`, service.api.authHeader);
      try {
        await client.open(30_000);
        await client.waitFor(lastId, 30_000);
        runsMs.push(client.receivedAt.get(lastId)! - client.sentAt);
        headers.push(client.headersAt - client.sentAt);
        bytes = client.bytes;
        const inOrder = client.order.length === lastId && client.order.every((id, k) => id === k + 1);
        if (!inOrder || client.duplicates.length > 0) complete = false;
      } finally {
        client.close();
      }
      options.log(`replay: run ${run}: ${runsMs[runsMs.length - 1].toFixed(1)} ms`);
    }
    return {
      events: options.events,
      lastId,
      runsMs,
      minMs: Math.min(...runsMs),
      medianMs: median(runsMs),
      maxMs: Math.max(...runsMs),
      headersMedianMs: median(headers),
      bytes,
      complete,
      fillMs,
    };
  } finally {
    await service.api.cancel(taskId).catch((error: unknown) => options.log(`replay: cancel failed: ${String(error)}`));
  }
}
