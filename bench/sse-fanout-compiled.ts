import { performance } from 'node:perf_hooks';
import { startScriptedOpenAiServer } from '@app/model-provider/testing/scripted-openai-server';
import { freePort } from '../test/support/service-process';
import { ApiClient } from './lib/api-client';
import type { ChildService } from './lib/child-service';
import { benchServiceEnv, startChildService } from './lib/child-service';
import { SseRecorder } from './lib/sse-recorder';
import type { Summary } from './lib/stats';
import { summarize } from './lib/stats';
import { sleep, waitUntil, withTimeout } from './lib/timing';
import { makeTmpDir, removeDir } from './lib/tmp-dir';

export interface CompiledSseFanoutFigures {
  readonly subscribers: number;
  readonly followUps: number;
  readonly intervalMs: number;
  /** POST …/messages sent → its `message` event at a client, over every (client, event) pair. */
  readonly latency: Summary;
  /** The POST's own round trip (its 202 received), for reference: the append is inside it. */
  readonly postResponse: Summary;
  readonly missing: number;
  readonly duplicates: number;
}

export interface CompiledSseFanoutOptions {
  readonly subscribers: number;
  readonly followUps: number;
  readonly intervalMs: number;
  readonly log: (line: string) => void;
}

const API_KEY = 'bench-key';
const WAIT_MS = 30_000;

/**
 * Benchmark 2b: benchmark 2's fan-out against the compiled all-in-one as a child process (what
 * `npm start` runs, with its heap settings), the clients in this process. A task whose model never
 * answers stays running; each follow-up POSTed to it appends exactly one `message` event, which
 * every client must receive once. The figure starts before the POST is written, so it holds the
 * request's own handling and append as well as the fan-out: stricter than append → delivery.
 */
export async function benchCompiledSseFanout(options: CompiledSseFanoutOptions): Promise<CompiledSseFanoutFigures> {
  const dataDir = await makeTmpDir('sse-child');
  const model = await startScriptedOpenAiServer({ defaultReply: { hang: true } });
  let service: ChildService | undefined;
  try {
    service = await startChildService({
      port: await freePort(),
      env: {
        ...benchServiceEnv(dataDir, API_KEY, model.url),
        LLM_TIMEOUT_MS: '3600000',
        LOG_LEVEL: 'warn',
      },
    });
    return await withTimeout('compiled SSE fan-out', measure(service.url, options), 5 * 60_000);
  } finally {
    await service?.stop();
    await model.close();
    await removeDir(dataDir);
  }
}

async function measure(url: string, options: CompiledSseFanoutOptions): Promise<CompiledSseFanoutFigures> {
  const api = new ApiClient(url, API_KEY);
  const id = await api.createTask('stay running');
  await waitUntil('the turn to start', async () => (await api.getTask(id)).status === 'running', WAIT_MS);
  const base = (await api.getTask(id)).lastEventId;
  const clients = Array.from(
    { length: options.subscribers },
    () => new SseRecorder(`${url}/api/v1/tasks/${id}/stream?after=${base}`, api.authHeader),
  );
  options.log(`sse (compiled child): ${options.subscribers} streams, ${options.followUps} follow-ups every ${options.intervalMs} ms`);
  try {
    await Promise.all(clients.map((c) => c.open()));
    const sentAt: number[] = [];
    const postMs: number[] = [];
    for (let k = 1; k <= options.followUps; k++) {
      const next = performance.now() + options.intervalMs;
      sentAt[k] = performance.now();
      await api.sendMessage(id, `follow-up ${k}`);
      postMs.push(performance.now() - sentAt[k]);
      await sleep(Math.max(0, next - performance.now()));
    }
    await Promise.all(clients.map((c) => c.waitFor(base + options.followUps, WAIT_MS).catch(() => undefined)));
    const samples: number[] = [];
    let missing = 0;
    for (const c of clients) {
      for (let k = 1; k <= options.followUps; k++) {
        const at = c.receivedAt.get(base + k);
        if (at === undefined) missing++;
        else samples.push(at - sentAt[k]);
      }
    }
    const duplicates = clients.reduce((n, c) => n + c.duplicates.length, 0);
    return {
      subscribers: options.subscribers,
      followUps: options.followUps,
      intervalMs: options.intervalMs,
      latency: summarize(samples),
      postResponse: summarize(postMs),
      missing,
      duplicates,
    };
  } finally {
    clients.forEach((c) => c.close());
  }
}
