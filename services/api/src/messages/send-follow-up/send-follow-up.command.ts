import { Command } from '@nestjs/cqrs';

export class SendFollowUpCommand extends Command<{ id: string; messageId: string; status: string }> {
  constructor(
    readonly tenantId: string,
    readonly taskId: string,
    readonly text: string,
    readonly maxTokens?: number,
    readonly maxCostUsd?: number,
  ) {
    super();
  }
}
