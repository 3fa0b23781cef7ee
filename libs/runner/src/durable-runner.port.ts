import type { StepOutcome } from '@app/workflows';

// StepOutcome is the agent turn workflow's activity result, so it is defined next to the workflow
// (which may import nothing of this lib); every runner reports steps with it.
export type { StepOutcome };

/**
 * Runs one step of a task; must be safe to call again after a crash at any point. A runner that
 * runs each turn on its own (Temporal) passes the turn: if the task is on another one, the step
 * does nothing and returns 'idle'.
 */
export type StepFunction = (taskId: string, signal: AbortSignal, turn?: number) => Promise<StepOutcome>;

/** The turn a task is on (turnOf in the orchestrator's agent loop): how a per-turn runner addresses it. */
export type TurnOf = (taskId: string) => Promise<number>;

/**
 * Drives tasks' agent loops in the background, durably: work that was unfinished when the
 * process stopped is resumed by `start()`. Adapters: in-process (all-in-one) and Temporal.
 */
export interface DurableRunner {
  /** Resumes every task that still has work, then follows notifications. */
  start(): Promise<void>;
  /** Something changed for the task (new message, decision): run its loop if idle. */
  notify(taskId: string): void;
  /**
   * The task was cancelled: aborts its in-flight step (model call, tool run) and ends its turn's
   * loop. `turn`: the turn that ended, when another may already have started (an interrupt starts
   * the next turn in the same append); absent: the turn the task is on.
   */
  abort(taskId: string, turn?: number): void;
  /** Resolves when no step runs for any task (tests and benchmarks). */
  idle(): Promise<void>;
  /**
   * Stops taking work. The steps running here are aborted (in-process: `start()` resumes them
   * from the events) or, on Temporal, may finish for the grace time and are then handed back.
   */
  stop(): Promise<void>;
  /**
   * The first step of a shutdown: no step starts from now on, and notifications are ignored; the
   * steps running go on (stop() then ends them). Absent where a step's work is not in this process
   * (Temporal: another worker takes it).
   */
  drain?(): void;
  /** The steps running in this process now (shutdown logs); absent when the runner cannot tell. */
  stepsRunning?(): number;
  /** Resolves once the runner's server answers (readiness); absent when it has none. */
  ping?(): Promise<void>;
}

export const DURABLE_RUNNER = Symbol('DURABLE_RUNNER');
