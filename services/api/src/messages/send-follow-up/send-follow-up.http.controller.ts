import { Body, Controller, Param, Post, UseGuards } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiBearerAuth, ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import { ApiKeyGuard } from '../../auth/api-key.guard';
import { Tenant } from '../../auth/tenant.decorator';
import { RateLimitGuard } from '../../limits/rate-limit.guard';
import { ok } from '../../http/envelope';
import { validateInput } from '../../validation/validate-input';
import { SendFollowUpCommand } from './send-follow-up.command';
import { SendFollowUpRequestDto } from './send-follow-up.request.dto';

@ApiTags('tasks')
@ApiBearerAuth()
@UseGuards(ApiKeyGuard)
@Controller('api/v1/tasks')
export class SendFollowUpHttpController {
  constructor(private readonly commandBus: CommandBus) {}

  @Post(':id/messages')
  @UseGuards(RateLimitGuard)
  @ApiOperation({ summary: 'Send a follow-up message: same workspace and context; queued while a turn runs.' })
  @ApiResponse({
    status: 201,
    description:
      '{"success":true,"data":{"id","messageId","status"}}: `running`, or the current status when queued; `pending` while the turn waits for a running slot of the tenant (MAX_RUNNING_TASKS_PER_TENANT).',
  })
  @ApiResponse({
    status: 429,
    description:
      'RATE_LIMITED: more creates and follow-ups than RATE_LIMIT_PER_MINUTE for this tenant in the last minute (shared by every API instance).',
    headers: { 'Retry-After': { description: 'Seconds until one more request fits.', schema: { type: 'integer', minimum: 1 } } },
  })
  async send(@Tenant() tenantId: string, @Param('id') id: string, @Body() body: SendFollowUpRequestDto) {
    const dto = await validateInput(SendFollowUpRequestDto, body);
    return ok(await this.commandBus.execute(new SendFollowUpCommand(tenantId, id, dto.message, dto.maxTokens)));
  }
}
