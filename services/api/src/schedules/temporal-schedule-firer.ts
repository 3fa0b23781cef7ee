import type { OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { Logger } from '@nestjs/common';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Readiness } from '@app/metrics';
import type { ScheduleClock } from '@app/runner';
import type { ScheduleState } from '@app/task-domain';
import { ScheduleFirer } from './schedule-firer';

/** Waits between attempts to tell the clock of a change (about a minute in all). */
const RETRY_MS = [250, 1000, 4000, 15_000, 40_000];

/**
 * The schedules' clock of the distributed mode (`RUNNER=temporal`): Temporal workflows, one per
 * shard of the schedules (libs/workflows' scheduleClockWorkflow), whose worker runs in every API
 * process and fires through ScheduleFiring. The timer is the Temporal server's, so killing the
 * process that held a shard delays its wake by seconds and loses nothing; exactly once per due
 * time is still each schedule's stream's. Every API process has the shards rescan the store when
 * it starts (the one that recorded a change may have stopped before telling the clock).
 */
export class TemporalScheduleFirer extends ScheduleFirer implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('Schedules');
  private removeReadiness?: () => void;
  /** Aborted at shutdown: a retry waiting for its next attempt gives up at once instead of holding the shutdown up. */
  private readonly stopping = new AbortController();
  private rescanning: Promise<void> = Promise.resolve();

  constructor(
    private readonly clock: ScheduleClock,
    private readonly readiness: Readiness,
  ) {
    super();
  }

  async onApplicationBootstrap(): Promise<void> {
    await this.clock.start();
    this.removeReadiness = this.readiness.add('temporal', () => this.clock.ping());
    // In the background: the API answers while the shards look at a thousand schedules.
    this.rescanning = this.retried('rescanning the schedules', () => this.clock.rescan());
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopping.abort();
    this.removeReadiness?.();
    await this.rescanning;
    await this.clock.stop();
  }

  /**
   * Has the schedule's shard look at it now, retried for about a minute. The change is recorded
   * already, so the response does not wait for this. If every attempt fails (Temporal down that
   * long), the shard still wakes at the due time it knew, and the next API process to start has
   * every shard rescan.
   */
  track(state: ScheduleState): void {
    void this.retried(`schedule ${state.id}: telling its clock of the change`, () => this.clock.changed(state.id));
  }

  private async retried(what: string, attempt: () => Promise<void>): Promise<void> {
    for (let n = 0; ; n++) {
      try {
        await attempt();
        return;
      } catch (error) {
        // Out of attempts, or stopping (also while waiting for the next one): said once, and given up.
        const giveUp =
          this.stopping.signal.aborted ||
          n >= RETRY_MS.length ||
          (await sleep(RETRY_MS[n], undefined, { signal: this.stopping.signal, ref: false }).then(
            () => false,
            () => true,
          ));
        if (giveUp) {
          this.logger.error(`${what} failed: ${String(error)}`);
          return;
        }
      }
    }
  }
}
