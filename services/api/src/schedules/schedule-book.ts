import { Inject, Injectable } from '@nestjs/common';
import { ConflictError } from '@app/common';
import type { StoredEvent } from '@app/event-store';
import { EVENT_STORE, EventStore, ExpectedRevisionConflictError } from '@app/event-store';
import type { ScheduleCommand, ScheduleEvent, ScheduleState } from '@app/task-domain';
import { SCHEDULE_EVENT_SCHEMA_VERSIONS, decideSchedule, evolveSchedule, initialScheduleState, scheduleStreamId } from '@app/task-domain';

/**
 * Every schedule of every tenant, in registration order: what the firer loads at start and what
 * counts a tenant's schedules against MAX_SCHEDULES_PER_TENANT (appended with its revision, so
 * two concurrent creates cannot both take the last place).
 */
export const SCHEDULE_INDEX_STREAM = 'schedules-index';

type IndexEvent =
  | { type: 'ScheduleRegistered'; data: { scheduleId: string; tenantId: string } }
  | { type: 'ScheduleUnregistered'; data: { scheduleId: string } };

export interface IndexEntry {
  readonly scheduleId: string;
  readonly tenantId: string;
  /** The index revision it was registered at: the list's order and cursor. */
  readonly revision: number;
}

/**
 * Schedules folded from their streams (`schedule-<id>`), the read side and the one write path:
 * read the stream's tail → decide → append with the revision read. The store stays the only
 * truth; what is held here only saves re-reading and re-folding what is known (a schedule is a
 * few hundred bytes: 100,000 of them are a few tens of MiB).
 */
@Injectable()
export class ScheduleBook {
  private readonly schedules = new Map<string, ScheduleState>();
  private readonly index = new Map<string, IndexEntry>();
  private indexRevision = 0;

  constructor(@Inject(EVENT_STORE) private readonly store: EventStore) {}

  /** The schedule as the store holds it now (its tail read). */
  async load(scheduleId: string): Promise<ScheduleState> {
    const known = this.schedules.get(scheduleId) ?? initialScheduleState();
    const tail = await this.store.readStream(scheduleStreamId(scheduleId), { fromRevision: known.revision + 1 });
    return this.apply(scheduleId, known, tail);
  }

  cached(scheduleId: string): ScheduleState | undefined {
    return this.schedules.get(scheduleId);
  }

  /** Folds events another process appended, as the store's feed delivers them; a gap is read from the store. */
  async applyDelivered(scheduleId: string, events: readonly StoredEvent[]): Promise<ScheduleState> {
    const known = this.schedules.get(scheduleId) ?? initialScheduleState();
    const fresh = events.filter((e) => e.revision > known.revision);
    if (fresh.length === 0) return known;
    if (fresh[0].revision !== known.revision + 1) return this.load(scheduleId);
    return this.apply(scheduleId, known, fresh);
  }

  /**
   * Decides and appends with the revision read; a concurrent append is re-decided on the fresh
   * state (`retries` times), which for a run means another firer recorded it and nothing is left.
   */
  async execute(
    scheduleId: string,
    command: ScheduleCommand,
    retries = 5,
  ): Promise<{ state: ScheduleState; events: readonly StoredEvent[] }> {
    for (let attempt = 0; ; attempt++) {
      const state = await this.load(scheduleId);
      const events = decideSchedule(command, state);
      if (events.length === 0) return { state, events: [] };
      try {
        const appended = await this.store.appendToStream(
          scheduleStreamId(scheduleId),
          events.map((e) => ({ type: e.type, data: e.data, schemaVersion: SCHEDULE_EVENT_SCHEMA_VERSIONS[e.type] })),
          state.revision === 0 ? 'no_stream' : state.revision,
        );
        return { state: this.apply(scheduleId, state, appended.events), events: appended.events };
      } catch (error) {
        if (!(error instanceof ExpectedRevisionConflictError) || attempt >= retries) throw error;
      }
    }
  }

  /** Registers a new schedule in the index, refusing it when the tenant already has `max`. */
  async register(scheduleId: string, tenantId: string, max: number): Promise<void> {
    for (;;) {
      await this.loadIndex();
      const held = [...this.index.values()].filter((e) => e.tenantId === tenantId).length;
      if (held >= max) throw new ConflictError(`a tenant may have at most ${max} schedules (MAX_SCHEDULES_PER_TENANT); delete one first`);
      if (await this.appendIndex({ type: 'ScheduleRegistered', data: { scheduleId, tenantId } })) return;
    }
  }

  async unregister(scheduleId: string): Promise<void> {
    for (;;) {
      await this.loadIndex();
      if (!this.index.has(scheduleId)) return;
      if (await this.appendIndex({ type: 'ScheduleUnregistered', data: { scheduleId } })) return;
    }
  }

  /** Every registered schedule, oldest first, as the store holds the index now. */
  async registered(): Promise<IndexEntry[]> {
    await this.loadIndex();
    return [...this.index.values()];
  }

  private async appendIndex(event: IndexEvent): Promise<boolean> {
    try {
      const appended = await this.store.appendToStream(
        SCHEDULE_INDEX_STREAM,
        [{ ...event, schemaVersion: 1 }],
        this.indexRevision === 0 ? 'no_stream' : this.indexRevision,
      );
      this.applyIndex(appended.events);
      return true;
    } catch (error) {
      if (error instanceof ExpectedRevisionConflictError) return false;
      throw error;
    }
  }

  private async loadIndex(): Promise<void> {
    this.applyIndex(await this.store.readStream(SCHEDULE_INDEX_STREAM, { fromRevision: this.indexRevision + 1 }));
  }

  private applyIndex(events: readonly StoredEvent[]): void {
    for (const stored of events) {
      if (stored.revision !== this.indexRevision + 1) continue;
      this.indexRevision = stored.revision;
      const event = stored as unknown as IndexEvent;
      if (event.type === 'ScheduleRegistered') {
        this.index.set(event.data.scheduleId, { ...event.data, revision: stored.revision });
      } else this.index.delete(event.data.scheduleId);
    }
  }

  private apply(scheduleId: string, state: ScheduleState, events: readonly StoredEvent[]): ScheduleState {
    let next = state;
    for (const stored of events) {
      if (stored.revision !== next.revision + 1) continue;
      next = evolveSchedule(next, toScheduleEvent(stored));
    }
    // A load and a delivery of the same schedule may overlap: the later revision is kept.
    if (next.exists && next.revision >= (this.schedules.get(scheduleId)?.revision ?? 0)) this.schedules.set(scheduleId, next);
    return next;
  }
}

/** The one place a stored schedule event is read; a kind this code does not know is an error, never skipped. */
export function toScheduleEvent(stored: StoredEvent): ScheduleEvent {
  if (!Object.hasOwn(SCHEDULE_EVENT_SCHEMA_VERSIONS, stored.type) || stored.schemaVersion !== 1)
    throw new Error(
      `schedule stream ${stored.streamId}: event ${stored.revision} is of a kind or version this release cannot read (${stored.type} v${stored.schemaVersion})`,
    );
  return { type: stored.type, data: stored.data } as ScheduleEvent;
}
