import { Command } from '@nestjs/cqrs';
import type { ForkOrigin } from '@app/task-domain';
import type { ForkTaskRequestDto } from './fork-task.request.dto';

export interface ForkedTask {
  readonly id: string;
  readonly status: string;
  readonly forkedFrom: ForkOrigin;
}

export class ForkTaskCommand extends Command<ForkedTask> {
  constructor(
    readonly tenantId: string,
    readonly sourceTaskId: string,
    readonly taskId: string,
    readonly request: ForkTaskRequestDto,
  ) {
    super();
  }
}
