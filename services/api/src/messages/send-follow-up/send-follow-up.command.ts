import { Command } from '@nestjs/cqrs';

export class SendFollowUpCommand extends Command<{ id: string; messageId: string; status: string }> {
  constructor(
    readonly tenantId: string,
    readonly taskId: string,
    readonly text: string,
    readonly maxTokens?: number,
    /** Set by a schedule's run (derived from the schedule and due time); absent: a new id. */
    readonly messageId?: string,
  ) {
    super();
  }
}
