import { Inject, Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { createHash } from 'node:crypto';
import { TaskSecrets, taskStreamId } from '@app/common';
import { EVENT_STORE, EventStore, ExpectedRevisionConflictError } from '@app/event-store';
import { TaskViewsStore } from '@app/read-models';
import type { ScheduleState } from '@app/task-domain';
import { TaskAlreadyExistsError } from '@app/task-domain';
import { SendFollowUpCommand } from '../messages/send-follow-up/send-follow-up.command';
import { SendFollowUpHandler } from '../messages/send-follow-up/send-follow-up.handler';
import { CreateTaskCommand } from '../tasks/create-task/create-task.command';
import { CreateTaskHandler } from '../tasks/create-task/create-task.handler';
import type { CreateTaskRequestDto } from '../tasks/create-task/create-task.request.dto';
import { nextDueAt } from './cron-rules';
import { ScheduleBook } from './schedule-book';
import { SchedulesConfig } from './schedules.config';

const ACTIVE: readonly string[] = ['pending', 'running', 'awaiting_approval'];
/** Due times one schedule records in one call (missed ones after a long stop); the next call goes on. */
const MAX_RUNS_PER_CALL = 1000;

/** The task a schedule's run starts, the same in every process: creating it twice is refused, not doubled. */
export const runTaskId = (scheduleId: string, dueAt: string): string => `task_${digest(`${scheduleId} ${dueAt}`)}`;
const runMessageId = (scheduleId: string, dueAt: string): string => `msg_${digest(`${scheduleId} ${dueAt} follow-up`)}`;
const digest = (text: string): string => createHash('sha256').update(text).digest('hex').slice(0, 32);

/**
 * Fires a schedule's due times (docs/api.md "Schedules"), whichever clock wakes it: the timer of
 * the all-in-one process or the schedule's Temporal workflow. Exactly once per due time comes
 * from the schedule's stream, not from the clock: the run is recorded (`ScheduleFired` or
 * `ScheduleSkipped`) with the revision read, so of two callers one records it and the other finds
 * it recorded; only the one that recorded it starts the task, whose id is derived from the
 * schedule and the due time, so starting it again after a crash creates nothing new.
 */
@Injectable()
export class ScheduleFiring implements OnApplicationShutdown {
  private readonly logger = new Logger('Schedules');
  private stopping = false;

  constructor(
    private readonly book: ScheduleBook,
    private readonly config: SchedulesConfig,
    private readonly createTask: CreateTaskHandler,
    private readonly sendFollowUp: SendFollowUpHandler,
    private readonly secrets: TaskSecrets,
    private readonly views: TaskViewsStore,
    @Inject(EVENT_STORE) private readonly store: EventStore,
  ) {}

  /** A long catch-up ends after the run it is recording: the next start goes on from the stream. */
  onApplicationShutdown(): void {
    this.stopping = true;
  }

  /**
   * Fires every due time of the schedule up to now, and returns the schedule as it then is (its
   * next due time is `nextDueAt` of it). `recover`: first start a run recorded but not started
   * (the stream says fired, the task does not exist), as after a crash between the two.
   */
  async fireDue(scheduleId: string, recover: boolean): Promise<ScheduleState> {
    let state = await this.book.load(scheduleId);
    if (recover) await this.startIfNotStarted(state, true);
    for (let i = 0; i < MAX_RUNS_PER_CALL && !this.stopping; i++) {
      const due = nextDueAt(state);
      if (!due || due.getTime() > Date.now()) break;
      state = await this.fire(state, due);
    }
    return state;
  }

  private async fire(s: ScheduleState, due: Date): Promise<ScheduleState> {
    const dueAt = due.toISOString();
    const at = new Date().toISOString();
    const skip = async (reason: string) =>
      (await this.book.execute(s.id, { type: 'RecordScheduleRun', data: { dueAt, at, outcome: 'skipped', reason } })).state;
    const late = Date.now() - due.getTime();
    if (late > this.config.catchupMs)
      return skip(
        `missed: no firer ran at the due time, and it was ${late} ms old, more than SCHEDULE_CATCHUP_MS (${this.config.catchupMs})`,
      );
    await this.startIfNotStarted(s, false);
    if (s.overlap === 'skip') {
      const running = await this.previousStillRunning(s);
      if (running) return skip(`the previous run, ${running}, is still running (overlap: skip)`);
    }
    const taskId = s.target ?? runTaskId(s.id, dueAt);
    const messageId = s.target ? runMessageId(s.id, dueAt) : undefined;
    const { state, events } = await this.book.execute(s.id, {
      type: 'RecordScheduleRun',
      data: { dueAt, at, outcome: 'fired', taskId, ...(messageId ? { messageId } : {}) },
    });
    // Nothing appended: another firer recorded this due time first, and starts it.
    if (events.length === 0) return state;
    return this.start(state, dueAt, taskId, messageId);
  }

  /** Starts a recorded run's task (or sends its follow-up); a failure is recorded on the run, once. */
  private async start(s: ScheduleState, dueAt: string, taskId: string, messageId?: string): Promise<ScheduleState> {
    try {
      if (s.target) {
        await this.sendFollowUp.execute(
          new SendFollowUpCommand(
            s.tenantId,
            s.target,
            s.task.message,
            s.task.maxTokens,
            'enqueue',
            undefined,
            messageId,
            s.task.maxCostUsd,
          ),
        );
        return s;
      }
      const secrets = this.secrets.open(s.id, { secretNames: s.task.secretNames, sealedSecrets: s.task.sealedSecrets });
      const request: CreateTaskRequestDto = {
        message: s.task.message,
        autoExecute: s.task.autoExecute,
        showInHistory: s.task.showInHistory,
        env: s.task.env,
        ...(s.task.secretNames.length > 0 ? { secrets } : {}),
        ...(s.task.maxTokens === undefined ? {} : { maxTokens: s.task.maxTokens }),
        ...(s.task.maxCostUsd === undefined ? {} : { maxCostUsd: s.task.maxCostUsd }),
        ...(s.task.webhookUrl === undefined ? {} : { webhookUrl: s.task.webhookUrl }),
      };
      await this.createTask.execute(new CreateTaskCommand(s.tenantId, taskId, request, [], s.id));
      return s;
    } catch (error) {
      // Started already, by another firer or before a crash: that is the run.
      if (error instanceof TaskAlreadyExistsError || error instanceof ExpectedRevisionConflictError) return s;
      const reason = error instanceof Error ? error.message : String(error);
      this.logger.warn(`schedule ${s.id}: the run due at ${dueAt} could not start: ${reason}`);
      const at = new Date().toISOString();
      return (await this.book.execute(s.id, { type: 'FailScheduleRun', data: { dueAt, at, reason } })).state;
    }
  }

  /**
   * A run recorded as fired whose task does not exist (the process stopped between the two) is
   * started now. A new task is checked at every due time (a read of its stream's revision); a
   * follow-up into the target only when the firer starts, since another instance may be sending it.
   */
  private async startIfNotStarted(s: ScheduleState, starting: boolean): Promise<void> {
    const run = s.lastRun;
    if (!run || run.outcome !== 'started' || !run.taskId || s.deleted) return;
    if (!s.target) {
      if ((await this.store.streamRevision(taskStreamId(run.taskId))) === 0) await this.start(s, run.dueAt, run.taskId);
      return;
    }
    if (!starting || !run.messageId) return;
    await this.views.refresh();
    const target = this.views.get(s.target);
    if (target && !target.messages.some((m) => m.id === run.messageId)) await this.start(s, run.dueAt, run.taskId, run.messageId);
  }

  private async previousStillRunning(s: ScheduleState): Promise<string | undefined> {
    const taskId = s.target ?? s.lastTaskId;
    if (!taskId) return undefined;
    await this.views.refresh();
    const view = this.views.get(taskId);
    return view && ACTIVE.includes(view.status) ? taskId : undefined;
  }
}
