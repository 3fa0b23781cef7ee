import { Controller, Param, Post, Req, UseGuards } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiBearerAuth, ApiBody, ApiConsumes, ApiExtraModels, ApiOperation, ApiTags, getSchemaPath } from '@nestjs/swagger';
// A type only: `import type` keeps fastify out of the compiled code's requires (SWC cannot tell an interface from a class).
import type { FastifyRequest } from 'fastify';
import { join } from 'node:path';
import { ApiConfig } from '../../api.config';
import { ApiKeyGuard } from '../../auth/api-key.guard';
import { Tenant } from '../../auth/tenant.decorator';
import { RateLimitGuard } from '../../limits/rate-limit.guard';
import { ok } from '../../http/envelope';
import { TaskAccess } from '../../tasks/task-access';
import { parseMultipartCreate } from '../../tasks/create-task/multipart-create.parser';
import { validateInput } from '../../validation/validate-input';
import { viewOnArrival } from './follow-up-arrival';
import { SendFollowUpCommand } from './send-follow-up.command';
import { SendFollowUpRequestDto } from './send-follow-up.request.dto';

@ApiTags('tasks')
@ApiBearerAuth()
@ApiExtraModels(SendFollowUpRequestDto)
@UseGuards(ApiKeyGuard)
@Controller('api/v1/tasks')
export class SendFollowUpHttpController {
  constructor(
    private readonly commandBus: CommandBus,
    private readonly config: ApiConfig,
    private readonly tasks: TaskAccess,
  ) {}

  @Post(':id/messages')
  @UseGuards(RateLimitGuard)
  @ApiOperation({
    summary:
      'Send a follow-up message: same workspace and context; queued while a turn runs, or per ifRunning rejected, interrupting or undoing it.',
  })
  @ApiConsumes('application/json', 'multipart/form-data')
  @ApiBody({ schema: { $ref: getSchemaPath(SendFollowUpRequestDto) }, description: 'JSON, or multipart with the same fields as text.' })
  async send(@Req() request: FastifyRequest, @Tenant() tenantId: string, @Param('id') id: string) {
    // `interrupt` and `rollback` are of the turn running when the request arrived (follow-up-arrival.ts);
    // read afresh first for the tenant check, and as the arrival when this instance did not know the task then.
    const current = await this.tasks.find(tenantId, id);
    const arrivedTo = viewOnArrival(request) ?? current;
    // Text fields only: a follow-up carries no files (the staging folder is never made).
    const fields = request.isMultipart()
      ? (
          await parseMultipartCreate(request, join(this.config.dataDir, 'uploads', 'follow-up-without-files'), {
            maxBytes: this.config.uploadMaxBytes,
            maxFiles: 0,
            noFiles: 'a follow-up message carries no files: send its fields (message, maxTokens, maxCostUsd, ifRunning) as text',
          })
        ).fields
      : request.body;
    const dto = await validateInput(SendFollowUpRequestDto, fields);
    return ok(
      await this.commandBus.execute(
        new SendFollowUpCommand(tenantId, id, dto.message, dto.maxTokens, dto.ifRunning, arrivedTo, undefined, dto.maxCostUsd),
      ),
    );
  }
}
