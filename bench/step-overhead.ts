import { startScriptedOpenAiServer } from '@app/model-provider/testing/scripted-openai-server';
import { freePort } from '../test/support/service-process';
import { ApiClient } from './lib/api-client';
import type { ChildService } from './lib/child-service';
import { benchServiceEnv, startChildService } from './lib/child-service';
import { readStreamEvents } from './lib/read-stream-events';
import { SseRecorder } from './lib/sse-recorder';
import type { Summary } from './lib/stats';
import { summarize } from './lib/stats';
import { waitUntil, withTimeout } from './lib/timing';
import { makeTmpDir, removeDir } from './lib/tmp-dir';

export interface StepOverheadFigures {
  readonly tasks: number;
  readonly stepsPerTask: number;
  /** Per task: (the turn's `done` − its `status` event, as received on SSE) / model calls. */
  readonly stepWall: Summary;
  /** The same, less the tools' own `durationMs` and the scripted model's time inside each request. */
  readonly stepOverhead: Summary;
  /** The scripted model's own time per request (arrival → reply written), for reference. */
  readonly modelServerMs: Summary;
}

export interface StepOverheadOptions {
  readonly tasks: number;
  readonly stepsPerTask: number;
  readonly warmupTasks: number;
  /** When set, the child runs with --cpu-prof into this directory. */
  readonly cpuProfDir?: string;
  readonly log: (line: string) => void;
}

const API_KEY = 'bench-key';
const TASK_TIMEOUT_MS = 30_000;
const TOTAL_TIMEOUT_MS = 5 * 60_000;

/**
 * Benchmark 10 (issue 19's "agent overhead per step, excluding model and tool time"): the compiled
 * all-in-one as a child process, like `npm start`, with the scripted OpenAI-protocol model in this
 * process answering at once. Each task is one turn of `stepsPerTask` `list_files` steps and a closing
 * answer; an SSE client follows it from `after=0`. Both ends of the turn are taken on the same
 * client, so the stream's own delivery delay cancels out. What remains per step is the agent's
 * work: the model request and its parsing, the tool call's events, the bus round trip to the
 * sandbox, the projections and SSE writes of each event.
 */
export async function benchStepOverhead(options: StepOverheadOptions): Promise<StepOverheadFigures> {
  const dataDir = await makeTmpDir('steps');
  const model = await startScriptedOpenAiServer({ defaultReply: { text: 'done' } });
  let service: ChildService | undefined;
  try {
    service = await startChildService({
      port: await freePort(),
      cpuProfDir: options.cpuProfDir,
      env: {
        ...benchServiceEnv(dataDir, API_KEY, model.url),
        LOG_LEVEL: 'warn',
      },
    });
    const url = service.url;
    return await withTimeout('step overhead benchmark', measure(url, model, options), TOTAL_TIMEOUT_MS);
  } finally {
    await service?.stop();
    await model.close();
    await removeDir(dataDir);
  }
}

async function measure(
  url: string,
  model: Awaited<ReturnType<typeof startScriptedOpenAiServer>>,
  options: StepOverheadOptions,
): Promise<StepOverheadFigures> {
  const api = new ApiClient(url, API_KEY);
  const wall: number[] = [];
  const overhead: number[] = [];
  const modelMs: number[] = [];
  const steps = options.stepsPerTask + 1;
  options.log(`steps: ${options.warmupTasks} warm-up + ${options.tasks} tasks of ${options.stepsPerTask} list_files steps each`);
  for (let t = 0; t < options.warmupTasks + options.tasks; t++) {
    const calls = Array.from({ length: options.stepsPerTask }, () => ({ toolCalls: [{ name: 'list_files', arguments: {} }] }));
    model.script(...calls, { text: 'done' });
    const timingsBefore = model.timings.length;
    const id = await api.createTask('loop');
    const client = new SseRecorder(`${url}/api/v1/tasks/${id}/stream?after=0`, api.authHeader);
    try {
      await client.open();
      await waitUntil('the turn to end', async () => (await api.getTask(id)).status === 'completed', TASK_TIMEOUT_MS, 100);
      const events = await readStreamEvents(url, id, api.authHeader, TASK_TIMEOUT_MS);
      const status = events.find((e) => e.event === 'status');
      const done = events.find((e) => e.event === 'done');
      if (!status || !done) throw new Error(`task ${id}: no status or done event in its history`);
      await client.waitFor(done.id, TASK_TIMEOUT_MS);
      const startedAt = client.receivedAt.get(status.id)!;
      const doneAt = client.receivedAt.get(done.id)!;
      const toolMs = events.filter((e) => e.event === 'tool_result').reduce((n, e) => n + Number(e.data.durationMs ?? 0), 0);
      const inModel = model.timings.slice(timingsBefore).reduce((n, m) => n + m, 0);
      if (model.timings.length - timingsBefore !== steps)
        throw new Error(`task ${id}: the model got ${model.timings.length - timingsBefore} calls, expected ${steps}`);
      if (t >= options.warmupTasks) {
        wall.push((doneAt - startedAt) / steps);
        overhead.push((doneAt - startedAt - toolMs - inModel) / steps);
        modelMs.push(inModel / steps);
      }
    } finally {
      client.close();
    }
  }
  return {
    tasks: options.tasks,
    stepsPerTask: options.stepsPerTask,
    stepWall: summarize(wall),
    stepOverhead: summarize(overhead),
    modelServerMs: summarize(modelMs),
  };
}
