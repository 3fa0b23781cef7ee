import { Controller, Get, Param, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiKeyGuard } from '../../auth/api-key.guard';
import { Tenant } from '../../auth/tenant.decorator';
import { ok } from '../../http/envelope';
import { ScheduleAccess } from '../schedule-access';
import { presentSchedule } from '../schedule.presenter';

@ApiTags('schedules')
@ApiBearerAuth()
@UseGuards(ApiKeyGuard)
@Controller('api/v1/schedules')
export class GetScheduleHttpController {
  constructor(private readonly schedules: ScheduleAccess) {}

  @Get(':id')
  @ApiOperation({ summary: 'Read a schedule, with its next and last run times.' })
  async get(@Tenant() tenantId: string, @Param('id') id: string) {
    return ok(presentSchedule(await this.schedules.find(tenantId, id)));
  }
}
