import { Injectable } from '@nestjs/common';
import { NotFoundError } from '@app/common';
import type { ScheduleState } from '@app/task-domain';
import { ScheduleBook } from './schedule-book';

const SCHEDULE_ID = /^sched_[a-f0-9]{32}$/;

/** Reads a schedule for a tenant, as the store holds it now; another tenant's schedule, or a deleted one, is indistinguishable from a missing one. */
@Injectable()
export class ScheduleAccess {
  constructor(private readonly book: ScheduleBook) {}

  async find(tenantId: string, id: string): Promise<ScheduleState> {
    if (!SCHEDULE_ID.test(id)) throw new NotFoundError('schedule');
    const state = await this.book.load(id);
    if (!state.exists || state.deleted || state.tenantId !== tenantId) throw new NotFoundError('schedule');
    return state;
  }
}
