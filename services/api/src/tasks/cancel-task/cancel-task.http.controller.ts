import { Controller, HttpCode, Param, Post, UseGuards } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiKeyGuard } from '../../auth/api-key.guard';
import { Tenant } from '../../auth/tenant.decorator';
import { ok } from '../../http/envelope';
import { CancelTaskCommand } from './cancel-task.command';

@ApiTags('tasks')
@ApiBearerAuth()
@UseGuards(ApiKeyGuard)
@Controller('api/v1/tasks')
export class CancelTaskHttpController {
  constructor(private readonly commandBus: CommandBus) {}

  @Post(':id/cancel')
  @HttpCode(200)
  @ApiOperation({ summary: 'Stop a running task and drop its queued follow-ups; a no-op on a task that is not running.' })
  async cancel(@Tenant() tenantId: string, @Param('id') id: string) {
    return ok(await this.commandBus.execute(new CancelTaskCommand(tenantId, id)));
  }
}
