import { Controller, Get, Query, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiQuery, ApiTags } from '@nestjs/swagger';
import { TaskViewsStore } from '@app/read-models';
import { ApiKeyGuard } from '../../auth/api-key.guard';
import { Tenant } from '../../auth/tenant.decorator';
import { ok } from '../../http/envelope';
import { validateInput } from '../../validation/validate-input';
import { presentTask } from '../task.presenter';
import { ListTasksRequestDto } from './list-tasks.request.dto';

@ApiTags('tasks')
@ApiBearerAuth()
@UseGuards(ApiKeyGuard)
@Controller('api/v1/tasks')
export class ListTasksHttpController {
  constructor(private readonly views: TaskViewsStore) {}

  @Get()
  @ApiOperation({ summary: "List the caller's tasks, newest first." })
  @ApiQuery({
    name: 'limit',
    required: false,
    description: 'page size',
    schema: { type: 'integer', minimum: 1, maximum: 100, default: 20 },
  })
  @ApiQuery({ name: 'cursor', required: false, description: 'the nextCursor of the previous page', schema: { type: 'string' } })
  @ApiQuery({
    name: 'includeHidden',
    required: false,
    description: 'true: include tasks created with showInHistory=false',
    schema: { type: 'boolean', default: false },
  })
  async list(@Tenant() tenantId: string, @Query() query: Record<string, unknown>) {
    const dto = await validateInput(ListTasksRequestDto, { ...query });
    await this.views.refresh(); // tasks created through another API instance a moment ago included
    const page = this.views.list(tenantId, {
      limit: dto.limit ?? 20,
      cursor: dto.cursor === undefined ? undefined : Number(dto.cursor),
      includeHidden: dto.includeHidden ?? false,
    });
    return ok({ tasks: page.tasks.map(presentTask), nextCursor: page.nextCursor });
  }
}
