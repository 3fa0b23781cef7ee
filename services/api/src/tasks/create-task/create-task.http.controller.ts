import { Controller, Post, Req, UseGuards } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiBearerAuth, ApiBody, ApiConsumes, ApiExtraModels, ApiOperation, ApiTags, getSchemaPath } from '@nestjs/swagger';
// A type only: `import type` keeps fastify out of the compiled code's requires (SWC cannot tell an interface from a class).
import type { FastifyRequest } from 'fastify';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { annotateLogContext, newId } from '@app/common';
import { ApiConfig } from '../../api.config';
import { ApiKeyGuard } from '../../auth/api-key.guard';
import { Tenant } from '../../auth/tenant.decorator';
import { RateLimitGuard } from '../../limits/rate-limit.guard';
import { ok } from '../../http/envelope';
import { validateInput } from '../../validation/validate-input';
import { CreateTaskCommand } from './create-task.command';
import { CreateTaskRequestDto } from './create-task.request.dto';
import { parseMultipartCreate } from './multipart-create.parser';

@ApiTags('tasks')
@ApiBearerAuth()
@ApiExtraModels(CreateTaskRequestDto)
@UseGuards(ApiKeyGuard)
@Controller('api/v1/tasks')
export class CreateTaskHttpController {
  constructor(
    private readonly commandBus: CommandBus,
    private readonly config: ApiConfig,
  ) {}

  @Post()
  @UseGuards(RateLimitGuard)
  @ApiOperation({ summary: 'Create a task. Returns at once; the agent runs in the background.' })
  @ApiConsumes('application/json', 'multipart/form-data')
  @ApiBody({
    schema: { $ref: getSchemaPath(CreateTaskRequestDto) },
    description:
      'JSON, or multipart with the same fields as text (booleans as true/false, secrets/env as JSON text) plus repeatable `files`.',
  })
  async create(@Req() request: FastifyRequest, @Tenant() tenantId: string) {
    const taskId = newId('task');
    annotateLogContext({ taskId });
    const stagingDir = join(this.config.dataDir, 'uploads', taskId);
    const { fields, files } = request.isMultipart()
      ? await parseMultipartCreate(request, stagingDir, { maxBytes: this.config.uploadMaxBytes, maxFiles: this.config.uploadMaxFiles })
      : { fields: request.body, files: [] };
    try {
      const dto = await validateInput(CreateTaskRequestDto, fields);
      return ok(await this.commandBus.execute(new CreateTaskCommand(tenantId, taskId, dto, files)));
    } finally {
      if (files.length > 0) await rm(stagingDir, { recursive: true, force: true });
    }
  }
}
