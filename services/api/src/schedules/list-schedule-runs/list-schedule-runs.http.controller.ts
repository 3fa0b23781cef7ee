import { Controller, Get, Inject, Param, Query, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiQuery, ApiTags } from '@nestjs/swagger';
import { EVENT_STORE, EventStore } from '@app/event-store';
import { scheduleStreamId } from '@app/task-domain';
import { ApiKeyGuard } from '../../auth/api-key.guard';
import { Tenant } from '../../auth/tenant.decorator';
import { ok } from '../../http/envelope';
import { validateInput } from '../../validation/validate-input';
import { ScheduleAccess } from '../schedule-access';
import { PageRequestDto } from '../../http/page.request.dto';
import type { ScheduleRun } from '../schedule-runs';
import { scheduleRuns } from '../schedule-runs';

@ApiTags('schedules')
@ApiBearerAuth()
@UseGuards(ApiKeyGuard)
@Controller('api/v1/schedules')
export class ListScheduleRunsHttpController {
  constructor(
    private readonly schedules: ScheduleAccess,
    @Inject(EVENT_STORE) private readonly store: EventStore,
  ) {}

  @Get(':id/runs')
  @ApiOperation({ summary: "A schedule's runs, newest first: each due time started, skipped (and why) or failed (and why)." })
  @ApiQuery({ name: 'limit', required: false, schema: { type: 'integer', minimum: 1, maximum: 100, default: 20 } })
  @ApiQuery({ name: 'cursor', required: false, description: 'the nextCursor of the previous page', schema: { type: 'string' } })
  async runs(@Tenant() tenantId: string, @Param('id') id: string, @Query() query: Record<string, unknown>) {
    const dto = await validateInput(PageRequestDto, { ...query });
    const state = await this.schedules.find(tenantId, id);
    const limit = dto.limit ?? 20;
    const newest = dto.cursor === undefined ? state.revision : Math.min(Number(dto.cursor) - 1, state.revision);
    // Read back from the newest run asked for, in growing windows, never the whole history of a
    // schedule that has run every minute for months. A window is read to the stream's end, where
    // a failure of one of its runs is recorded.
    const runsFrom = async (from: number): Promise<ScheduleRun[]> =>
      scheduleRuns(await this.store.readStream(scheduleStreamId(id), { fromRevision: from })).filter((r) => r.revision <= newest);
    let size = limit * 2 + 8;
    let runs = await runsFrom(Math.max(1, newest - size + 1));
    while (runs.length <= limit && newest - size + 1 > 1) {
      size *= 4;
      runs = await runsFrom(Math.max(1, newest - size + 1));
    }
    const page = runs.reverse().slice(0, limit);
    return ok({
      runs: page.map(({ revision: _cursor, ...run }) => run),
      nextCursor: runs.length > limit ? String(page[page.length - 1].revision) : null,
    });
  }
}
