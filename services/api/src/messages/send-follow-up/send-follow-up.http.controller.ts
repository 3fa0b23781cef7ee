import { Body, Controller, Param, Post, UseGuards } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
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
  async send(@Tenant() tenantId: string, @Param('id') id: string, @Body() body: SendFollowUpRequestDto) {
    const dto = await validateInput(SendFollowUpRequestDto, body);
    return ok(await this.commandBus.execute(new SendFollowUpCommand(tenantId, id, dto.message, dto.maxTokens, dto.maxCostUsd)));
  }
}
