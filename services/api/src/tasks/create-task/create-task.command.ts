import { Command } from '@nestjs/cqrs';
import type { StagedUpload } from './multipart-create.parser';
import type { CreateTaskRequestDto } from './create-task.request.dto';

export interface CreatedTask {
  readonly id: string;
  readonly status: string;
}

export class CreateTaskCommand extends Command<CreatedTask> {
  constructor(
    readonly tenantId: string,
    readonly taskId: string,
    readonly request: CreateTaskRequestDto,
    readonly files: readonly StagedUpload[],
    /** The schedule whose run this is (docs/api.md "Schedules"); absent: a caller's create. */
    readonly scheduleId?: string,
  ) {
    super();
  }
}
