import { Command } from '@nestjs/cqrs';
import type { TaskView } from '@app/task-domain';
import type { IfRunning } from './send-follow-up.request.dto';

export class SendFollowUpCommand extends Command<{ id: string; messageId: string; status: string }> {
  constructor(
    readonly tenantId: string,
    readonly taskId: string,
    readonly text: string,
    readonly maxTokens?: number,
    readonly ifRunning: IfRunning = 'enqueue',
    /** The task as read when the request arrived, before its body was read (what an interrupt is of). */
    readonly arrivedTo?: TaskView,
    /** Set by a schedule's run (derived from the schedule and due time); absent: a new id. */
    readonly messageId?: string,
    readonly maxCostUsd?: number,
  ) {
    super();
  }
}
