import { Controller, Delete, Param, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiKeyGuard } from '../../auth/api-key.guard';
import { Tenant } from '../../auth/tenant.decorator';
import { ok } from '../../http/envelope';
import { ScheduleAccess } from '../schedule-access';
import { ScheduleBook } from '../schedule-book';
import { ScheduleFirer } from '../schedule-firer';

@ApiTags('schedules')
@ApiBearerAuth()
@UseGuards(ApiKeyGuard)
@Controller('api/v1/schedules')
export class DeleteScheduleHttpController {
  constructor(
    private readonly schedules: ScheduleAccess,
    private readonly book: ScheduleBook,
    private readonly firer: ScheduleFirer,
  ) {}

  @Delete(':id')
  @ApiOperation({ summary: 'Delete a schedule: no run after this; its runs stay readable by their tasks.' })
  async remove(@Tenant() tenantId: string, @Param('id') id: string) {
    await this.schedules.find(tenantId, id);
    const { state } = await this.book.execute(id, { type: 'DeleteSchedule', data: { at: new Date().toISOString() } }, 10);
    await this.book.unregister(id);
    this.firer.track(state);
    return ok({ id, deleted: true as const });
  }
}
