import { Controller, Get, Inject, Param, Query, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiQuery, ApiTags } from '@nestjs/swagger';
import { taskStreamId } from '@app/common';
import { EVENT_STORE, EventStore } from '@app/event-store';
import { ApiKeyGuard } from '../../auth/api-key.guard';
import { Tenant } from '../../auth/tenant.decorator';
import { streamEventOf } from '../../events-stream/stream-event';
import { ok } from '../../http/envelope';
import { validateInput } from '../../validation/validate-input';
import { TaskAccess } from '../task-access';
import { DEFAULT_EVENTS_PAGE, ListTaskEventsRequestDto, MAX_EVENTS_PAGE } from './list-task-events.request.dto';

/**
 * The audit trail: the task's events as the stream replays them (same ids, kinds and payloads,
 * through the same projection), each with the time the store recorded it, which SSE events do
 * not carry. A page is one bounded read of the store.
 */
@ApiTags('tasks')
@ApiBearerAuth()
@UseGuards(ApiKeyGuard)
@Controller('api/v1/tasks')
export class ListTaskEventsHttpController {
  constructor(
    private readonly tasks: TaskAccess,
    @Inject(EVENT_STORE) private readonly store: EventStore,
  ) {}

  @Get(':id/events')
  @ApiOperation({
    summary: "A page of the task's events, oldest first, each with the time the service recorded it",
    description:
      'The events the stream replays with `after=0` (the same ids, kinds and `data`), each with `at`, when the service ' +
      'recorded it. `nextAfter` is present when more follow: pass it as `after` for the next page.',
  })
  @ApiQuery({
    name: 'after',
    required: false,
    description: 'list the events after this event id (0, the default: from event 1); the nextAfter of the previous page',
    schema: { type: 'string', pattern: '^(0|[1-9][0-9]{0,15})$', default: '0' },
  })
  @ApiQuery({
    name: 'limit',
    required: false,
    description: 'page size',
    schema: { type: 'integer', minimum: 1, maximum: MAX_EVENTS_PAGE, default: DEFAULT_EVENTS_PAGE },
  })
  async list(@Tenant() tenantId: string, @Param('id') id: string, @Query() query: Record<string, unknown>) {
    await this.tasks.find(tenantId, id);
    const dto = await validateInput(ListTaskEventsRequestDto, { ...query });
    const after = Number(dto.after ?? 0);
    const limit = dto.limit ?? DEFAULT_EVENTS_PAGE;
    // One more than the page: whether it exists is whether a next page does.
    const stored = await this.store.readStream(taskStreamId(id), { fromRevision: after + 1, maxCount: limit + 1 });
    const page = stored.slice(0, limit);
    const events = page.map((event) => {
      const { kind, data } = streamEventOf(event);
      return { id: event.revision, type: kind, data, at: event.recordedAt };
    });
    return ok({ events, ...(stored.length > limit ? { nextAfter: page[page.length - 1].revision } : {}) });
  }
}
