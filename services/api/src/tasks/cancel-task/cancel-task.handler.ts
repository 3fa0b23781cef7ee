import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { TaskViewsStore } from '@app/read-models';
import { TaskCommandExecutor } from '@app/task-commands';
import { TaskAccess } from '../task-access';
import { CancelTaskCommand } from './cancel-task.command';

/** Cancelling a task that is not running changes nothing and reports its status. */
@CommandHandler(CancelTaskCommand)
export class CancelTaskHandler implements ICommandHandler<CancelTaskCommand> {
  constructor(
    private readonly tasks: TaskAccess,
    private readonly commands: TaskCommandExecutor,
    private readonly views: TaskViewsStore,
  ) {}

  async execute({ tenantId, taskId }: CancelTaskCommand) {
    await this.tasks.find(tenantId, taskId);
    const { position } = await this.commands.execute(taskId, { type: 'CancelTask', data: {} }, { retries: 10 });
    if (position !== undefined) await this.views.waitForPosition(position);
    return { id: taskId, status: (await this.tasks.find(tenantId, taskId)).status };
  }
}
