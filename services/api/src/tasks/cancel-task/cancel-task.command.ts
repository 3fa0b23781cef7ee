import { Command } from '@nestjs/cqrs';

export class CancelTaskCommand extends Command<{ id: string; status: string }> {
  constructor(
    readonly tenantId: string,
    readonly taskId: string,
  ) {
    super();
  }
}
