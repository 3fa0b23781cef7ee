import { Body, Controller, Param, Post, UseGuards } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import { annotateLogContext, newId } from '@app/common';
import { ApiKeyGuard } from '../../auth/api-key.guard';
import { Tenant } from '../../auth/tenant.decorator';
import { RateLimitGuard } from '../../limits/rate-limit.guard';
import { ok } from '../../http/envelope';
import { validateInput } from '../../validation/validate-input';
import { ForkTaskCommand } from './fork-task.command';
import { ForkTaskRequestDto } from './fork-task.request.dto';

@ApiTags('tasks')
@ApiBearerAuth()
@UseGuards(ApiKeyGuard)
@Controller('api/v1/tasks')
export class ForkTaskHttpController {
  constructor(private readonly commandBus: CommandBus) {}

  @Post(':id/fork')
  // A fork is a new task: it counts against the tenant's rate like a create.
  @UseGuards(RateLimitGuard)
  @ApiOperation({
    summary:
      "Fork a task after one of its events: a new task with the source's events up to there, which goes on from that point; the source is unchanged.",
  })
  async fork(@Tenant() tenantId: string, @Param('id') id: string, @Body() body: ForkTaskRequestDto) {
    const dto = await validateInput(ForkTaskRequestDto, body);
    const taskId = newId('task');
    annotateLogContext({ taskId });
    return ok(await this.commandBus.execute(new ForkTaskCommand(tenantId, id, taskId, dto)));
  }
}
