import type { OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { Logger } from '@nestjs/common';
import type { Readiness } from '@app/metrics';
import type { ScheduleClock } from '@app/runner';
import type { ScheduleState } from '@app/task-domain';
import type { ScheduleBook } from './schedule-book';
import { ScheduleFirer } from './schedule-firer';

/** Schedules read at once when the firer starts. */
const LOAD_BATCH = 32;
/** Waits between attempts to wake a changed schedule's workflow (about a minute in all). */
const WAKE_RETRY_MS = [250, 1000, 4000, 15_000, 40_000];

/**
 * The schedules' clock of the distributed mode (`RUNNER=temporal`): a Temporal workflow per
 * schedule (libs/workflows' scheduleWorkflow), whose worker runs in every API process and fires
 * through ScheduleFiring. The timer is the Temporal server's, so killing the process that held a
 * schedule delays its wake by seconds and loses nothing; exactly once per due time is still the
 * schedule's stream's. Every API process makes sure at start that each live schedule has its
 * workflow (the one that recorded a schedule may have stopped before starting it).
 */
export class TemporalScheduleFirer extends ScheduleFirer implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('Schedules');
  private removeReadiness?: () => void;
  private stopped = false;
  private ensuring: Promise<void> = Promise.resolve();

  constructor(
    private readonly clock: ScheduleClock,
    private readonly book: ScheduleBook,
    private readonly readiness: Readiness,
  ) {
    super();
  }

  async onApplicationBootstrap(): Promise<void> {
    await this.clock.start();
    this.removeReadiness = this.readiness.add('temporal', () => this.clock.ping());
    // In the background: the API answers while a thousand schedules are looked at.
    this.ensuring = this.ensureLive().catch((error: unknown) =>
      this.logger.error(`starting the schedules' missing workflows failed: ${String(error)}`),
    );
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    this.removeReadiness?.();
    await this.ensuring;
    await this.clock.stop();
  }

  /** Starts the workflow of each live schedule that has none, a batch at a time. */
  private async ensureLive(): Promise<void> {
    const entries = await this.book.registered();
    for (let i = 0; i < entries.length && !this.stopped; i += LOAD_BATCH) {
      const states = await Promise.all(entries.slice(i, i + LOAD_BATCH).map((e) => this.book.load(e.scheduleId)));
      await this.clock.ensure(states.filter((state) => !state.deleted).map((state) => state.id));
    }
  }

  /**
   * Wakes the schedule's workflow (starting it if it has none), retried for about a minute. The
   * change is recorded already, so the response does not wait for this. If every attempt fails
   * (Temporal down that long), an open workflow still wakes at the due time it knew, reads the
   * stream and goes by what it says; a missing one is started by the next API process to start.
   */
  track(state: ScheduleState): void {
    void this.wake(state.id);
  }

  private async wake(scheduleId: string): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      try {
        await this.clock.changed(scheduleId);
        return;
      } catch (error) {
        if (this.stopped || attempt >= WAKE_RETRY_MS.length) {
          this.logger.error(`schedule ${scheduleId}: waking its workflow failed: ${String(error)}`);
          return;
        }
        await new Promise((resolve) => setTimeout(resolve, WAKE_RETRY_MS[attempt]).unref());
      }
    }
  }
}
