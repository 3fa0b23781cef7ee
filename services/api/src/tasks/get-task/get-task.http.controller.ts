import { Controller, Get, Param, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiKeyGuard } from '../../auth/api-key.guard';
import { Tenant } from '../../auth/tenant.decorator';
import { ok } from '../../http/envelope';
import { TaskAccess } from '../task-access';
import { presentTask } from '../task.presenter';

@ApiTags('tasks')
@ApiBearerAuth()
@UseGuards(ApiKeyGuard)
@Controller('api/v1/tasks')
export class GetTaskHttpController {
  constructor(private readonly tasks: TaskAccess) {}

  @Get(':id')
  @ApiOperation({
    summary:
      'Read a task (poll instead of streaming). Includes pendingApprovals, summed token usage and maxTokens, the token budget in force (null: unlimited).',
  })
  async get(@Tenant() tenantId: string, @Param('id') id: string) {
    return ok(presentTask(await this.tasks.find(tenantId, id)));
  }
}
