/** What one step of a task's agent loop reported. */
export type StepOutcome =
  /** Made progress; run the next step. */
  | 'continue'
  /** Waiting on something outside (an approval, a tool in flight); a notify() wakes it. */
  | 'wait'
  /** Nothing to do until the task gets new work. */
  | 'idle'
  /** Like 'wait', but look again at this time (epoch ms) even if nothing notifies: a deadline. */
  | { readonly waitUntil: number };

/** What an agent turn workflow is about: the task, and which of its turns. */
export interface AgentTurn {
  readonly taskId: string;
  readonly turn: number;
}

/**
 * The activities the agent turn workflow calls. The workflow only sees this type; the Temporal
 * runner's `createActivities` implements it around the agent loop's step function.
 */
export interface AgentTurnActivities {
  step(turn: AgentTurn): Promise<StepOutcome>;
}

/** What a shard's schedule clock workflow starts from (fresh, or continued from its last run). */
export interface ScheduleShardInput {
  readonly shard: number;
  /** How many shards the schedules are spread over (scheduleShardOf). */
  readonly shards: number;
  /** Next due times (epoch ms) of the shard's schedules that have one, by schedule id. */
  readonly due?: Readonly<Record<string, number>>;
  /** Schedules changed and not looked at yet. */
  readonly changed?: readonly string[];
  /** Schedules to look at with recovery (their last look failed). */
  readonly recover?: readonly string[];
  /** Look at every schedule of the shard from the store, recovering runs left unstarted. */
  readonly rescan?: boolean;
}

/** What the clock asks the activity to look at: a list of the shard's schedules, or all of them. */
export interface ScheduleLook {
  readonly shard: number;
  readonly shards: number;
  /** Ignored when `rescan`. */
  readonly scheduleIds: readonly string[];
  /** Of scheduleIds: first start a run recorded but not started (the stream says fired, no task). */
  readonly recover: readonly string[];
  /** Every schedule of the shard (from the store's list), each with recovery. */
  readonly rescan: boolean;
}

/** What a look found, for each schedule looked at. */
export interface ScheduleLookResult {
  /** The next due time (epoch ms), or null: paused, deleted, or no due time left. */
  readonly next: Readonly<Record<string, number | null>>;
  /** Looks that failed (logged by the worker): looked at again soon, with recovery. */
  readonly failed: readonly string[];
}

/** The activities the schedule clock workflow calls; the Temporal schedule clock implements them. */
export interface ScheduleActivities {
  /** Fires every due time up to now of each schedule looked at (exactly once each, by its stream), then says when next. */
  fireSchedules(look: ScheduleLook): Promise<ScheduleLookResult>;
}
