import { Body, Controller, Param, Patch, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiBody, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiKeyGuard } from '../../auth/api-key.guard';
import { Tenant } from '../../auth/tenant.decorator';
import { ok } from '../../http/envelope';
import { validateInput } from '../../validation/validate-input';
import { checkTimezone, checkedCron } from '../cron-rules';
import { ScheduleAccess } from '../schedule-access';
import { ScheduleBook } from '../schedule-book';
import { ScheduleFirer } from '../schedule-firer';
import { presentSchedule } from '../schedule.presenter';
import { SchedulesConfig } from '../schedules.config';
import { UpdateScheduleRequestDto } from './update-schedule.request.dto';

@ApiTags('schedules')
@ApiBearerAuth()
@UseGuards(ApiKeyGuard)
@Controller('api/v1/schedules')
export class UpdateScheduleHttpController {
  constructor(
    private readonly schedules: ScheduleAccess,
    private readonly book: ScheduleBook,
    private readonly firer: ScheduleFirer,
    private readonly config: SchedulesConfig,
  ) {}

  @Patch(':id')
  @ApiOperation({ summary: 'Change cron, timezone or overlap, or pause (paused=true) and resume (paused=false).' })
  @ApiBody({ type: UpdateScheduleRequestDto })
  async update(@Tenant() tenantId: string, @Param('id') id: string, @Body() body: unknown) {
    const dto = await validateInput(UpdateScheduleRequestDto, body);
    const current = await this.schedules.find(tenantId, id);
    if (dto.timezone !== undefined) checkTimezone(dto.timezone);
    if (dto.cron !== undefined || dto.timezone !== undefined)
      checkedCron(dto.cron ?? current.cron, dto.timezone ?? current.timezone, this.config.minIntervalMs);
    const { state } = await this.book.execute(
      id,
      {
        type: 'UpdateSchedule',
        data: {
          ...(dto.cron === undefined ? {} : { cron: dto.cron.trim().split(/\s+/).join(' ') }),
          ...(dto.timezone === undefined ? {} : { timezone: dto.timezone }),
          ...(dto.overlap === undefined ? {} : { overlap: dto.overlap }),
          ...(dto.paused === undefined ? {} : { paused: dto.paused }),
          at: new Date().toISOString(),
        },
      },
      10,
    );
    this.firer.track(state);
    return ok(presentSchedule(state));
  }
}
