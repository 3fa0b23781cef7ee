import { performance } from 'node:perf_hooks';
import type { InProcessService } from './lib/in-process-service';
import type { Summary } from './lib/stats';
import { summarize } from './lib/stats';
import { waitUntil, withTimeout } from './lib/timing';

export interface InterruptLatencyFigures {
  readonly warmupRuns: number;
  readonly runs: number;
  /** POST …/messages with ifRunning interrupt sent → the new turn's first model request received, the turn's model call hanging. */
  readonly duringModelCall: Summary;
  /** The same, the turn's command (`sleep`) running in the sandbox: its kill is on the path. */
  readonly duringCommand: Summary;
  /** Diagnostic: the POST's 201 received, model-call case. */
  readonly postResponse: Summary;
}

const STEP_TIMEOUT_MS = 10_000;

/**
 * Benchmark 13: a follow-up sent with `ifRunning: "interrupt"` to a running turn (docs/api.md
 * "Follow-ups while a turn runs"): time from sending the POST to the scripted model receiving the
 * new turn's first request. Each run is one new task; the interrupted turn is either waiting on
 * its model call (which hangs) or running a `sleep` in the sandbox, which must be killed first.
 */
export async function benchInterruptLatency(
  service: InProcessService,
  options: { readonly runs: number; readonly warmupRuns?: number; readonly log: (line: string) => void },
): Promise<InterruptLatencyFigures> {
  const warmupRuns = options.warmupRuns ?? 5;
  const duringModelCall: number[] = [];
  const duringCommand: number[] = [];
  const postResponse: number[] = [];
  options.log(`interrupt: ${warmupRuns} warm-up + ${options.runs} measured runs, while a model call hangs and while a command runs`);
  for (let i = 0; i < warmupRuns + options.runs; i++) {
    const measured = i >= warmupRuns;
    const { id } = await service.createHangingTask();
    const model = await interruptOnce(service, id);
    const command = await interruptOnce(service, await taskRunningCommand(service));
    if (measured) {
      duringModelCall.push(model.toModelRequest);
      postResponse.push(model.toResponse);
      duringCommand.push(command.toModelRequest);
    }
  }
  return {
    warmupRuns,
    runs: options.runs,
    duringModelCall: summarize(duringModelCall),
    duringCommand: summarize(duringCommand),
    postResponse: summarize(postResponse),
  };
}

/** A task whose turn runs `sleep 30` in its sandbox, once the command has started. */
async function taskRunningCommand(service: InProcessService): Promise<string> {
  service.model.script({ toolCalls: [{ name: 'shell', arguments: { command: 'sleep 30' } }] });
  const id = await service.api.createTask('bench: a slow command');
  await waitUntil(
    'the command to start',
    async () => {
      const { state } = await service.executor.load(id);
      return state.exists && state.calls.some((c) => c.phase === 'running');
    },
    STEP_TIMEOUT_MS,
    5,
  );
  // ToolCallStarted is recorded before the sandbox is asked: give the command time to be spawned.
  await new Promise((r) => setTimeout(r, 100));
  return id;
}

/** Interrupts the task's running turn; the new turn's first model request is timed, then the task cancelled. */
async function interruptOnce(service: InProcessService, id: string): Promise<{ toModelRequest: number; toResponse: number }> {
  let reached: number | undefined;
  service.model.script(() => {
    reached = performance.now();
    return { hang: true };
  });
  const t0 = performance.now();
  const response = await withTimeout(
    'POST …/messages (interrupt)',
    fetch(`${service.url}/api/v1/tasks/${id}/messages`, {
      method: 'POST',
      headers: { ...service.api.authHeader, 'content-type': 'application/json' },
      body: JSON.stringify({ message: 'bench: instead', ifRunning: 'interrupt' }),
    }),
    STEP_TIMEOUT_MS,
  );
  const toResponse = performance.now() - t0;
  if (response.status !== 201) throw new Error(`interrupt: HTTP ${response.status} ${(await response.text()).slice(0, 300)}`);
  await response.arrayBuffer();
  await waitUntil('the new turn to reach the model', () => reached !== undefined, STEP_TIMEOUT_MS, 1);
  await service.api.cancel(id);
  return { toModelRequest: reached! - t0, toResponse };
}
