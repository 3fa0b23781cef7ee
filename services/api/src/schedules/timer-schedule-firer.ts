import type { OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { Logger } from '@nestjs/common';
import type { EventStore, StoredEvent } from '@app/event-store';
import type { ScheduleState } from '@app/task-domain';
import { scheduleIdOf } from '@app/task-domain';
import { nextDueAt } from './cron-rules';
import type { ScheduleBook } from './schedule-book';
import { ScheduleFirer } from './schedule-firer';
import type { ScheduleFiring } from './schedule-firing';

/** Schedules handled at once in a pass: a thousand due in the same second start a few at a time. */
const CONCURRENCY = 8;
const MAX_TIMER_MS = 2 ** 31 - 1;
/** Schedules read at once when the firer starts. */
const LOAD_BATCH = 32;

/**
 * The schedules' clock of the all-in-one mode (`RUNNER=in-process`): a timer over the event store
 * (docs/api.md "Schedules"). Between due times it costs one timer, the earliest due time of all
 * schedules, kept up to date from the store's feed (another process's create, pause or cron
 * change, when several API processes share a store). At the due time ScheduleFiring fires it;
 * at start it also starts what was recorded but not started, and what fell due while it was down.
 */
export class TimerScheduleFirer extends ScheduleFirer implements OnApplicationBootstrap, OnApplicationShutdown {
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
    private readonly firing: ScheduleFiring,
    private readonly store: EventStore,
  ) {
    super();
  }

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
        await this.firing.fireDue(id, recover).then(
          (state) => this.track(state),
          (error: unknown) => this.logger.error(`schedule ${id}: ${String(error)}`),
        );
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  }
}
