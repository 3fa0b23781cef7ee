import { performance } from 'node:perf_hooks';
import type { EventStore } from '@app/event-store';
import { startWebhookReceiver } from '@app/webhooks/testing/webhook-receiver';
import { benchWebhookEnv } from './lib/child-service';
import { InProcessService } from './lib/in-process-service';
import type { Summary } from './lib/stats';
import { summarize } from './lib/stats';
import { sleep } from './lib/timing';

export interface AppendCostRun {
  /** Whether WEBHOOK_SECRET and WEBHOOK_URL were set, so the dispatcher ran and every task had a webhook URL. */
  readonly webhooks: boolean;
  /** Writers appending at the same time, each to its own task and waiting for its previous append. */
  readonly writers: number;
  readonly appends: number;
  /** Appends per second over the whole run (all `concurrency` writers together). */
  readonly appendsPerSecond: number;
  /** One follow-up's `execute()` (tail read, decide, append). */
  readonly appendCall: Summary;
  /** Store reads started during the run, per append: `readAll` and `readStream` calls. */
  readonly readAllPerAppend: number;
  readonly readStreamPerAppend: number;
}

export interface AppendCostFigures {
  readonly runs: readonly AppendCostRun[];
}

export interface AppendCostOptions {
  /** Each entry is one measured run in every service: that many writers, that many appends in all. */
  readonly loads: readonly { readonly writers: number; readonly appends: number }[];
  readonly log: (line: string) => void;
}

/**
 * Benchmark 8b: what the webhook dispatcher costs events that make no message due. Follow-ups
 * (`message` events) are appended to running tasks through the command executor, as fast as the
 * writers (one per task, each waiting for its previous append) can go, in services without any
 * WEBHOOK_* setting and with WEBHOOK_SECRET and WEBHOOK_URL set, started in the order off, on,
 * on, off so that warming up in this process favours neither. The dispatcher sees every one of
 * these appends and sends nothing.
 */
export async function benchWebhookAppendCost(options: AppendCostOptions): Promise<AppendCostFigures> {
  const receiver = await startWebhookReceiver((_, res) => void res.writeHead(200).end());
  try {
    const runs: AppendCostRun[] = [];
    for (const webhooks of [false, true, true, false]) {
      const env: Record<string, string> = webhooks ? benchWebhookEnv(`127.0.0.1:${receiver.port}`) : {};
      const service = await InProcessService.start(env);
      try {
        for (const load of options.loads) {
          options.log(`webhook append cost: ${load.appends} follow-ups, ${load.writers} writers, webhooks ${webhooks ? 'on' : 'off'}`);
          runs.push({ webhooks, writers: load.writers, ...(await appendRun(service, load.writers, load.appends)) });
        }
      } finally {
        await service.close();
      }
    }
    if (receiver.received.length > 0) throw new Error(`the receiver got ${receiver.received.length} requests; none was due`);
    return { runs };
  } finally {
    await receiver.close();
  }
}

async function appendRun(
  service: InProcessService,
  writers: number,
  appends: number,
): Promise<Omit<AppendCostRun, 'webhooks' | 'writers'>> {
  const tasks: string[] = [];
  for (let i = 0; i < writers; i++) tasks.push((await service.createHangingTask()).id);
  // A short warm-up of the same work, then quiet, so the measured run starts from an idle loop.
  await Promise.all(tasks.map((id) => service.appendFollowUp(id)));
  await sleep(200);

  const counts = countReads(service.store);
  const calls: number[] = [];
  const perWriter = Math.ceil(appends / writers);
  const started = performance.now();
  try {
    await Promise.all(
      tasks.map(async (id) => {
        for (let i = 0; i < perWriter; i++) {
          const t0 = performance.now();
          await service.appendFollowUp(id);
          calls.push(performance.now() - t0);
        }
      }),
    );
  } finally {
    counts.restore();
  }
  const seconds = (performance.now() - started) / 1000;
  return {
    appends: calls.length,
    appendsPerSecond: calls.length / seconds,
    appendCall: summarize(calls),
    readAllPerAppend: counts.readAll / calls.length,
    readStreamPerAppend: counts.readStream / calls.length,
  };
}

/** Counts the store's reads until `restore()`. */
function countReads(store: EventStore): { readAll: number; readStream: number; restore(): void } {
  const s = store as unknown as Record<string, unknown>;
  const own = { readAll: Object.hasOwn(s, 'readAll'), readStream: Object.hasOwn(s, 'readStream') };
  const { readAll, readStream } = store;
  const counts = {
    readAll: 0,
    readStream: 0,
    restore: () => {
      if (own.readAll) store.readAll = readAll;
      else delete s.readAll;
      if (own.readStream) store.readStream = readStream;
      else delete s.readStream;
    },
  };
  store.readAll = function (this: EventStore, opts) {
    counts.readAll++;
    return readAll.call(this, opts);
  };
  store.readStream = function (this: EventStore, streamId, opts) {
    counts.readStream++;
    return readStream.call(this, streamId, opts);
  };
  return counts;
}
