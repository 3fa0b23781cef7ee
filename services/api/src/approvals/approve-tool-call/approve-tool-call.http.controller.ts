import { Body, Controller, HttpCode, Param, Post, UseGuards } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
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
  @ApiOperation({
    summary: 'Approve or reject a tool call awaiting approval.',
    description:
      'proceed_once runs the call; proceed_always runs it and approves similar later calls of the task (shell: every program of the ' +
      'line already approved, never with output redirection, substitutions or code-running programs; write_file/edit_file: the whole tool, any path, as "allow all edits"; ' +
      'MCP: same server and tool; others: same tool); cancel declines it (a cancelled tool_result follows). A call undecided for ' +
      'APPROVAL_TIMEOUT_MS (default 24 h) is treated as declined (tool_decision with outcome "expired").',
  })
  async approve(
    @Tenant() tenantId: string,
    @Param('id') id: string,
    @Param('callId') callId: string,
    @Body() body: ApproveToolCallRequestDto,
  ) {
    const dto = await validateInput(ApproveToolCallRequestDto, body);
    return ok(await this.commandBus.execute(new ApproveToolCallCommand(tenantId, id, callId, dto.outcome)));
  }
}
