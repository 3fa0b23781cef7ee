import { startScriptedOpenAiServer } from '@app/model-provider/testing/scripted-openai-server';
import type { LoadOptions, LoadResult } from './lib/autocannon-run';
import { runAutocannon } from './lib/autocannon-run';
import { benchServiceEnv, startChildService } from './lib/child-service';
import { freePort } from '../test/support/service-process';
import { runPaced } from './lib/paced-load';
import type { Summary } from './lib/stats';
import { summarize } from './lib/stats';
import { makeTmpDir, removeDir } from './lib/tmp-dir';

export interface CreateLatencyFigures {
  readonly rate: number;
  readonly durationS: number;
  readonly connections: number;
  readonly latency: Summary;
  readonly achievedRps: number;
  readonly responses: number;
  readonly non2xx: number;
  readonly errors: number;
  readonly timeouts: number;
  readonly statusCodes: Record<string, number>;
  /** Model calls the scripted model received during the measured run (each created task runs one turn). */
  readonly modelCalls: number;
  /** The same load spread evenly in time by our own open-loop client (supplementary). */
  readonly paced?: { latency: Summary; achievedRps: number; non2xx: number; errors: number; timeouts: number; unanswered: number };
}

export interface CreateLatencyOptions {
  readonly rate: number;
  readonly durationS: number;
  readonly warmupS: number;
  readonly connections: number;
  readonly paced: boolean;
  readonly cpuProfDir?: string;
  /** Extra variables for the child (e.g. EVENT_STORE=postgres for a comparison run). */
  readonly extraEnv?: Record<string, string>;
  readonly log: (line: string) => void;
}

/**
 * Benchmark 1: POST /api/v1/tasks at a fixed overall rate against the service running as a child
 * process, with the scripted model answering "ok" in this process so every task runs one turn.
 */
export async function benchCreateLatency(options: CreateLatencyOptions): Promise<CreateLatencyFigures> {
  const dataDir = await makeTmpDir('create');
  const model = await startScriptedOpenAiServer({ defaultReply: { text: 'ok' } });
  const port = await freePort();
  let service: Awaited<ReturnType<typeof startChildService>> | undefined;
  try {
    service = await startChildService({
      port,
      cpuProfDir: options.cpuProfDir,
      env: {
        ...benchServiceEnv(dataDir, 'bench-key', model.url),
        ...options.extraEnv,
      },
    });
    const load: LoadOptions = {
      url: `${service.url}/api/v1/tasks`,
      body: JSON.stringify({ message: 'bench' }),
      headers: { 'content-type': 'application/json', authorization: 'Bearer bench-key' },
      overallRate: options.rate,
      connections: options.connections,
      durationS: options.durationS,
    };
    options.log(`create: warm-up ${options.warmupS} s at ${options.rate} req/s`);
    await runAutocannon({ ...load, durationS: options.warmupS });
    options.log(`create: measuring ${options.durationS} s at ${options.rate} req/s (autocannon, ${options.connections} connections)`);
    const modelCallsBefore = model.requests.length;
    const measured = await runAutocannon(load);
    const modelCalls = model.requests.length - modelCallsBefore;
    let paced: CreateLatencyFigures['paced'];
    if (options.paced) {
      options.log(`create: supplementary evenly paced run, ${options.durationS} s at ${options.rate} req/s`);
      await runPaced({ ...load, durationS: Math.min(options.warmupS, 2) });
      const p = await runPaced(load);
      paced = {
        latency: summarize(p.latencies2xx),
        achievedRps: p.responses / p.durationS,
        non2xx: p.non2xx,
        errors: p.errors,
        timeouts: p.timeouts,
        unanswered: p.unanswered ?? 0,
      };
    }
    return toFigures(options, measured, modelCalls, paced);
  } finally {
    await service?.stop().catch(() => undefined);
    await model.close().catch(() => undefined);
    await removeDir(dataDir);
  }
}

function toFigures(
  options: CreateLatencyOptions,
  r: LoadResult,
  modelCalls: number,
  paced: CreateLatencyFigures['paced'],
): CreateLatencyFigures {
  return {
    rate: options.rate,
    durationS: options.durationS,
    connections: options.connections,
    latency: summarize(r.latencies2xx),
    achievedRps: r.responses / r.durationS,
    responses: r.responses,
    non2xx: r.non2xx,
    errors: r.errors,
    timeouts: r.timeouts,
    statusCodes: r.statusCodes,
    modelCalls,
    paced,
  };
}
