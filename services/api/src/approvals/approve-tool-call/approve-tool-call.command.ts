import { Command } from '@nestjs/cqrs';
import type { ApprovalOutcome } from '@app/task-domain';

export class ApproveToolCallCommand extends Command<{ callId: string; outcome: ApprovalOutcome; approved: boolean }> {
  constructor(
    readonly tenantId: string,
    readonly taskId: string,
    readonly callId: string,
    readonly outcome: ApprovalOutcome,
  ) {
    super();
  }
}
