import { Inject } from '@nestjs/common';
import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { SecretVault, newId } from '@app/common';
import { MESSAGE_BUS, MessageBus } from '@app/bus';
import { PrepareWorkspaceRequest, SUBJECTS } from '@app/contracts';
import { TaskViewsStore } from '@app/read-models';
import { TaskCommandExecutor } from '@app/task-commands';
import { stat } from 'node:fs/promises';
import { CreateTaskCommand, CreatedTask } from './create-task.command';

@CommandHandler(CreateTaskCommand)
export class CreateTaskHandler implements ICommandHandler<CreateTaskCommand, CreatedTask> {
  constructor(
    private readonly commands: TaskCommandExecutor,
    private readonly views: TaskViewsStore,
    private readonly vault: SecretVault,
    @Inject(MESSAGE_BUS) private readonly bus: MessageBus,
  ) {}

  async execute({ tenantId, taskId, request, files }: CreateTaskCommand): Promise<CreatedTask> {
    const uploaded = await Promise.all(files.map(async (f) => ({ name: f.name, size: (await stat(f.stagedPath)).size })));
    if (files.length > 0) {
      await this.bus.request<PrepareWorkspaceRequest, unknown>(SUBJECTS.sandboxPrepareWorkspace, { taskId, files }, { timeoutMs: 120_000 });
    }
    const secrets = request.secrets ?? {};
    // Secrets go to this process's memory before the task exists, so its first step sees them.
    this.vault.put(taskId, secrets);
    const command = {
      type: 'CreateTask' as const,
      data: {
        taskId,
        tenantId,
        messageId: newId('msg'),
        text: request.message,
        autoExecute: request.autoExecute ?? true,
        showInHistory: request.showInHistory ?? true,
        env: request.env ?? {},
        secretNames: Object.keys(secrets),
        files: uploaded,
      },
    };
    const { position } = await this.commands.execute(taskId, command).catch((error: unknown) => {
      this.vault.forget(taskId);
      throw error;
    });
    if (position !== undefined) await this.views.waitForPosition(position);
    return { id: taskId, status: 'pending' };
  }
}
