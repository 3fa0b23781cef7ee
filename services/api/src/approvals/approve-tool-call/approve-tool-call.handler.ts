import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { TaskViewsStore } from '@app/read-models';
import { TaskCommandExecutor } from '@app/task-commands';
import { TaskAccess } from '../../tasks/task-access';
import { ApproveToolCallCommand } from './approve-tool-call.command';

/**
 * Records the caller's decision. Re-deciding after a concurrent append is safe: the decider
 * sees the fresh state, so of two racing decisions exactly one is recorded and the other is
 * a CONFLICT.
 */
@CommandHandler(ApproveToolCallCommand)
export class ApproveToolCallHandler implements ICommandHandler<ApproveToolCallCommand> {
  constructor(
    private readonly tasks: TaskAccess,
    private readonly commands: TaskCommandExecutor,
    private readonly views: TaskViewsStore,
  ) {}

  async execute({ tenantId, taskId, callId, outcome }: ApproveToolCallCommand) {
    await this.tasks.find(tenantId, taskId);
    const { position } = await this.commands.execute(taskId, { type: 'DecideToolCall', data: { callId, outcome } }, { retries: 10 });
    if (position !== undefined) await this.views.waitForPosition(position);
    return { callId, outcome, approved: outcome !== 'cancel' };
  }
}
