import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { newId } from '@app/common';
import { TaskViewsStore } from '@app/read-models';
import { TaskCommandExecutor } from '@app/task-commands';
import { ApiConfig } from '../../api.config';
import { TaskAccess } from '../../tasks/task-access';
import { checkTokenBudgetCap } from '../../validation/check-token-budget-cap';
import { SendFollowUpCommand } from './send-follow-up.command';

/** A follow-up on a finished task starts the next turn; one sent mid-turn is queued. */
@CommandHandler(SendFollowUpCommand)
export class SendFollowUpHandler implements ICommandHandler<SendFollowUpCommand> {
  constructor(
    private readonly tasks: TaskAccess,
    private readonly commands: TaskCommandExecutor,
    private readonly views: TaskViewsStore,
    private readonly config: ApiConfig,
  ) {}

  async execute({ tenantId, taskId, text, maxTokens, messageId: givenId }: SendFollowUpCommand) {
    checkTokenBudgetCap(maxTokens, this.config.taskMaxTokensCap);
    await this.tasks.find(tenantId, taskId);
    const messageId = givenId ?? newId('msg');
    const { position } = await this.commands.execute(
      taskId,
      { type: 'AddUserMessage', data: { messageId, text, ...(maxTokens === undefined ? {} : { maxTokens }) } },
      { retries: 10 },
    );
    if (position !== undefined) await this.views.waitForPosition(position);
    return { id: taskId, messageId, status: (await this.tasks.find(tenantId, taskId)).status };
  }
}
