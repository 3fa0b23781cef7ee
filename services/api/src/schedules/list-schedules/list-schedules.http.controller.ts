import { Controller, Get, Query, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiQuery, ApiTags } from '@nestjs/swagger';
import { ApiKeyGuard } from '../../auth/api-key.guard';
import { Tenant } from '../../auth/tenant.decorator';
import { ok } from '../../http/envelope';
import { validateInput } from '../../validation/validate-input';
import { ScheduleBook } from '../schedule-book';
import { presentSchedule } from '../schedule.presenter';
import { PageRequestDto } from '../../http/page.request.dto';

@ApiTags('schedules')
@ApiBearerAuth()
@UseGuards(ApiKeyGuard)
@Controller('api/v1/schedules')
export class ListSchedulesHttpController {
  constructor(private readonly book: ScheduleBook) {}

  @Get()
  @ApiOperation({ summary: "List the caller's schedules, newest first." })
  @ApiQuery({ name: 'limit', required: false, schema: { type: 'integer', minimum: 1, maximum: 100, default: 20 } })
  @ApiQuery({ name: 'cursor', required: false, description: 'the nextCursor of the previous page', schema: { type: 'string' } })
  async list(@Tenant() tenantId: string, @Query() query: Record<string, unknown>) {
    const dto = await validateInput(PageRequestDto, { ...query });
    const limit = dto.limit ?? 20;
    const before = dto.cursor === undefined ? Infinity : Number(dto.cursor);
    const entries = (await this.book.registered()).filter((e) => e.tenantId === tenantId && e.revision < before).reverse();
    const page = entries.slice(0, limit);
    const schedules = (await Promise.all(page.map((e) => this.book.load(e.scheduleId)))).filter((s) => s.exists && !s.deleted);
    return ok({
      schedules: schedules.map(presentSchedule),
      nextCursor: entries.length > limit ? String(page[page.length - 1].revision) : null,
    });
  }
}
