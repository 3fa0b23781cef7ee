import { Body, Controller, HttpCode, Param, Post, UseGuards } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiBearerAuth, ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import { ApiKeyGuard } from '../../auth/api-key.guard';
import { Tenant } from '../../auth/tenant.decorator';
import { ok } from '../../http/envelope';
import { validateInput } from '../../validation/validate-input';
import { ApproveToolCallCommand } from './approve-tool-call.command';
import { ApproveToolCallRequestDto } from './approve-tool-call.request.dto';

@ApiTags('approvals')
@ApiBearerAuth()
@UseGuards(ApiKeyGuard)
@Controller('api/v1/tasks')
export class ApproveToolCallHttpController {
  constructor(private readonly commandBus: CommandBus) {}

  @Post(':id/tools/:callId/approve')
  @HttpCode(200)
  @ApiOperation({ summary: 'Approve or reject a tool call awaiting approval.' })
  @ApiResponse({ status: 200, description: '{"success":true,"data":{"callId","outcome","approved"}}' })
  @ApiResponse({ status: 400, description: 'VALIDATION_ERROR: outcome not one of the allowed values' })
  @ApiResponse({ status: 404, description: 'NOT_FOUND: unknown task or call' })
  @ApiResponse({ status: 409, description: 'CONFLICT: the call is no longer awaiting approval' })
  async approve(@Tenant() tenantId: string, @Param('id') id: string, @Param('callId') callId: string, @Body() body: ApproveToolCallRequestDto) {
    const dto = await validateInput(ApproveToolCallRequestDto, body);
    return ok(await this.commandBus.execute(new ApproveToolCallCommand(tenantId, id, callId, dto.outcome)));
  }
}
