import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { createHash } from 'node:crypto';
import { TaskSecrets, taskStreamId } from '@app/common';
import type { StoredEvent } from '@app/event-store';
import { EVENT_STORE, EventStore, ExpectedRevisionConflictError } from '@app/event-store';
import { TaskViewsStore } from '@app/read-models';
import type { ScheduleState } from '@app/task-domain';
import { TaskAlreadyExistsError, scheduleIdOf } from '@app/task-domain';
import { SendFollowUpCommand } from '../messages/send-follow-up/send-follow-up.command';
import { SendFollowUpHandler } from '../messages/send-follow-up/send-follow-up.handler';
import { CreateTaskCommand } from '../tasks/create-task/create-task.command';
import { CreateTaskHandler } from '../tasks/create-task/create-task.handler';
import type { CreateTaskRequestDto } from '../tasks/create-task/create-task.request.dto';
import { nextDueAt } from './cron-rules';
import { ScheduleBook } from './schedule-book';
import { SchedulesConfig } from './schedules.config';

const ACTIVE: readonly string[] = ['pending', 'running', 'awaiting_approval'];
/** Schedules handled at once in a pass: a thousand due in the same second start a few at a time. */
const CONCURRENCY = 8;
/** Due times one schedule records in one pass (missed ones after a long stop); the next pass goes on. */
const MAX_RUNS_PER_PASS = 1000;
const MAX_TIMER_MS = 2 ** 31 - 1;
/** Schedules read at once when the firer starts. */
const LOAD_BATCH = 32;

/** The task a schedule's run starts, the same in every process: creating it twice is refused, not doubled. */
export const runTaskId = (scheduleId: string, dueAt: string): string => `task_${digest(`${scheduleId} ${dueAt}`)}`;
const runMessageId = (scheduleId: string, dueAt: string): string => `msg_${digest(`${scheduleId} ${dueAt} follow-up`)}`;
const digest = (text: string): string => createHash('sha256').update(text).digest('hex').slice(0, 32);

/**
 * Fires every schedule's due times (docs/api.md "Schedules"). It runs in every API process: the
 * all-in-one service and each instance of the distributed mode. Exactly once per due time comes
 * from the schedule's stream, not from this process: the run is recorded (`ScheduleFired` or
 * `ScheduleSkipped`) with the revision read, so of two firers one records it and the other finds
 * it recorded; only the one that recorded it starts the task, whose id is derived from the
 * schedule and the due time, so starting it again after a crash creates nothing new.
 *
 * Between due times it costs one timer: the earliest due time of all schedules, kept up to date
 * from the store's feed (another instance's create, pause or cron change).
 */
@Injectable()
export class ScheduleFirer implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('Schedules');
  /** Each schedule's next due time (ms); absent: paused, deleted or never again. */
  private readonly due = new Map<string, number>();
  private timer?: NodeJS.Timeout;
  private timerAt = Infinity;
  private passing: Promise<void> = Promise.resolve();
  private passQueued = false;
  private stopped = false;
  private unsubscribe?: () => void;

  constructor(
    private readonly book: ScheduleBook,
    private readonly config: SchedulesConfig,
    private readonly createTask: CreateTaskHandler,
    private readonly sendFollowUp: SendFollowUpHandler,
    private readonly secrets: TaskSecrets,
    private readonly views: TaskViewsStore,
    @Inject(EVENT_STORE) private readonly store: EventStore,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    this.unsubscribe = this.store.onAppended((events) => this.delivered(events));
    // Read a few at a time: a start with many schedules is not one store round trip after another.
    const entries = await this.book.registered();
    for (let i = 0; i < entries.length; i += LOAD_BATCH) {
      const states = await Promise.all(entries.slice(i, i + LOAD_BATCH).map((e) => this.book.load(e.scheduleId)));
      for (const state of states) this.track(state);
    }
    // Runs recorded but not started when the last process stopped are started now, then what is due.
    this.queuePass(true);
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    this.unsubscribe?.();
    clearTimeout(this.timer);
    await this.passing;
  }

  /** Tells the firer of a schedule changed through this process, without waiting for the feed. */
  track(state: ScheduleState): void {
    const next = nextDueAt(state);
    if (next) this.due.set(state.id, next.getTime());
    else this.due.delete(state.id);
    this.arm();
  }

  private delivered(events: readonly StoredEvent[]): void {
    const bySchedule = new Map<string, StoredEvent[]>();
    for (const e of events) {
      const id = scheduleIdOf(e.streamId);
      if (id === undefined) continue;
      const list = bySchedule.get(id);
      if (list) list.push(e);
      else bySchedule.set(id, [e]);
    }
    for (const [id, list] of bySchedule) {
      this.book.applyDelivered(id, list).then(
        (state) => this.track(state),
        (error: unknown) => this.logger.error(`schedule ${id}: reading its stream failed: ${String(error)}`),
      );
    }
  }

  private arm(): void {
    if (this.stopped) return;
    let earliest = Infinity;
    for (const at of this.due.values()) if (at < earliest) earliest = at;
    if (earliest === this.timerAt) return;
    clearTimeout(this.timer);
    this.timerAt = earliest;
    if (earliest === Infinity) return;
    this.timer = setTimeout(
      () => {
        this.timerAt = Infinity;
        this.queuePass(false);
      },
      Math.min(Math.max(earliest - Date.now(), 0), MAX_TIMER_MS),
    );
    this.timer.unref();
  }

  /** Passes run one at a time; one asked for meanwhile runs once after. */
  private queuePass(recover: boolean): void {
    if (this.passQueued && !recover) return;
    this.passQueued = true;
    this.passing = this.passing
      .then(async () => {
        this.passQueued = false;
        if (!this.stopped) await this.pass(recover);
      })
      .catch((error: unknown) => this.logger.error(`a schedules pass failed: ${String(error)}`))
      .finally(() => this.arm());
  }

  private async pass(recover: boolean): Promise<void> {
    const now = Date.now();
    const ids = [...this.due.entries()].filter(([, at]) => recover || at <= now).map(([id]) => id);
    if (recover) for (const { scheduleId } of await this.book.registered()) if (!ids.includes(scheduleId)) ids.push(scheduleId);
    let next = 0;
    const worker = async () => {
      while (next < ids.length && !this.stopped) {
        const id = ids[next++];
        await this.fireDue(id, recover).catch((error: unknown) => this.logger.error(`schedule ${id}: ${String(error)}`));
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  }

  private async fireDue(scheduleId: string, recover: boolean): Promise<void> {
    let state = await this.book.load(scheduleId);
    if (recover) await this.startIfNotStarted(state, true);
    for (let i = 0; i < MAX_RUNS_PER_PASS && !this.stopped; i++) {
      const due = nextDueAt(state);
      if (!due || due.getTime() > Date.now()) break;
      state = await this.fire(state, due);
    }
    this.track(state);
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
          new SendFollowUpCommand(s.tenantId, s.target, s.task.message, s.task.maxTokens, 'enqueue', undefined, messageId),
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
