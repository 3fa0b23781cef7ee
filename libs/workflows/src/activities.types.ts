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

/** What a schedule workflow is about: the schedule, and whether to look for a run left unstarted. */
export interface ScheduleClockInput {
  readonly scheduleId: string;
  /** False in a run continued from another: only a fresh run (a start, a reconcile) looks. */
  readonly recover?: boolean;
}

/** What a schedule's wake found: when to wake next, or that the schedule is gone. */
export interface ScheduleWake {
  /** The next due time (epoch ms); absent: paused, or its cron has none left. */
  readonly nextDueAt?: number;
  /** Deleted (or never existed): its workflow ends. */
  readonly gone?: boolean;
}

/** The activities the schedule workflow calls; the Temporal schedule clock implements them. */
export interface ScheduleActivities {
  /** Fires every due time of the schedule up to now (exactly once each, by its stream), then says when next. */
  fireDue(input: { readonly scheduleId: string; readonly recover: boolean }): Promise<ScheduleWake>;
}
