import { shutdownGraceMs, shutdownTimeoutMsFromEnv } from '@app/common';
import type { DurableRunner, StepFunction, TurnOf } from './durable-runner.port';
import { InProcessRunner } from './in-process/in-process-runner';
import type { FireSchedules, ScheduleClock } from './schedule-clock.port';
import type { TemporalRunner as TemporalRunnerClass } from './temporal/temporal-runner';
import type { TemporalScheduleClock as TemporalScheduleClockClass } from './temporal/temporal-schedule-clock';

export type RunnerConfig =
  | { readonly kind: 'in-process' }
  | {
      readonly kind: 'temporal';
      readonly address: string;
      readonly namespace: string;
      readonly taskQueue: string;
      /** How long a step may finish on a worker shutting down (TemporalRunnerOptions.shutdownGraceMs). */
      readonly shutdownGraceMs: number;
    };

/**
 * `RUNNER=in-process` (default) runs the agent loops in this process. `RUNNER=temporal` runs them
 * as Temporal workflows on `TEMPORAL_ADDRESS` (required), namespace `TEMPORAL_NAMESPACE`
 * (default `default`), task queue `TEMPORAL_TASK_QUEUE` (default `agent-loop`). Anything else
 * fails, rather than silently running loops no other process can see. On shutdown a running
 * step gets all of SHUTDOWN_TIMEOUT_MS but the last 3 s (at least half of it) to finish: the
 * rest is for the cancelled ones to report back and the connections to close.
 */
export function runnerConfigFromEnv(env: NodeJS.ProcessEnv): RunnerConfig {
  const kind = env.RUNNER?.trim() || 'in-process';
  if (kind === 'in-process') return { kind };
  if (kind !== 'temporal') throw new Error(`RUNNER must be "in-process" or "temporal", got "${kind}"`);
  const address = env.TEMPORAL_ADDRESS?.trim();
  if (!address) throw new Error('RUNNER=temporal needs TEMPORAL_ADDRESS (host:port of the Temporal frontend)');
  return {
    kind,
    address,
    namespace: env.TEMPORAL_NAMESPACE?.trim() || 'default',
    taskQueue: env.TEMPORAL_TASK_QUEUE?.trim() || 'agent-loop',
    shutdownGraceMs: shutdownGraceMs(shutdownTimeoutMsFromEnv(env)),
  };
}

export interface DurableRunnerDeps {
  readonly step: StepFunction;
  /** The tasks with unfinished work, resumed by start(). */
  readonly activeTaskIds: () => string[];
  /** The turn a task is on; the Temporal runner runs each turn as its own workflow. */
  readonly turnOf: TurnOf;
  readonly onError?: (taskId: string, error: unknown) => void;
}

export function createDurableRunner(config: RunnerConfig, { step, activeTaskIds, turnOf, onError }: DurableRunnerDeps): DurableRunner {
  if (config.kind === 'in-process') return new InProcessRunner(step, activeTaskIds, onError);
  // Loaded only when chosen: the Temporal SDK (client, worker, protobufs) would cost every
  // all-in-one start about half a second of CPU for a runner it never uses (BENCHMARKS.md, "Footprint").
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded only when chosen, see above
  const { TemporalRunner } = require('./temporal/temporal-runner') as { TemporalRunner: typeof TemporalRunnerClass };
  return new TemporalRunner(step, activeTaskIds, {
    address: config.address,
    namespace: config.namespace,
    taskQueue: config.taskQueue,
    shutdownGraceMs: config.shutdownGraceMs,
    turnOf,
    onError,
  });
}

/**
 * The schedules' clock when `RUNNER=temporal`: a clock workflow per shard of the schedules on the
 * same Temporal server and namespace, on a task queue of its own, `<TEMPORAL_TASK_QUEUE>-schedules`,
 * whose worker runs in the processes that fire schedules (the API's). Undefined for `RUNNER=in-process`, where the
 * API's own timer over the event store is the clock.
 */
export function createScheduleClock(
  config: RunnerConfig,
  fireSchedules: FireSchedules,
  onError?: (what: string, error: unknown) => void,
): ScheduleClock | undefined {
  if (config.kind === 'in-process') return undefined;
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded only when chosen, like the runner
  const { TemporalScheduleClock } = require('./temporal/temporal-schedule-clock') as {
    TemporalScheduleClock: typeof TemporalScheduleClockClass;
  };
  return new TemporalScheduleClock(fireSchedules, {
    address: config.address,
    namespace: config.namespace,
    taskQueue: `${config.taskQueue}-schedules`,
    shutdownGraceMs: config.shutdownGraceMs,
    onError,
  });
}
