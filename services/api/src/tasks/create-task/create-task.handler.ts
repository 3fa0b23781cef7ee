import { Inject } from '@nestjs/common';
import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { TaskSecrets, ValidationError, newId } from '@app/common';
import { MESSAGE_BUS, MessageBus, requestUntilDelivered } from '@app/bus';
import { PrepareWorkspaceReply, PrepareWorkspaceRequest, SUBJECTS, UploadRef } from '@app/contracts';
import { OBJECT_STORE, ObjectStore } from '@app/object-store';
import { TaskViewsStore } from '@app/read-models';
import { TaskCommandExecutor } from '@app/task-commands';
import { parseTaskMcpServers } from '@app/task-domain';
import { WebhookConfig, checkWebhookUrl } from '@app/webhooks';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { ApiConfig } from '../../api.config';
import { checkTokenBudgetCap } from '../../validation/check-token-budget-cap';
import { CreateTaskCommand, CreatedTask } from './create-task.command';
import { StagedUpload } from './multipart-create.parser';

@CommandHandler(CreateTaskCommand)
export class CreateTaskHandler implements ICommandHandler<CreateTaskCommand, CreatedTask> {
  constructor(
    private readonly commands: TaskCommandExecutor,
    private readonly views: TaskViewsStore,
    private readonly secrets: TaskSecrets,
    @Inject(MESSAGE_BUS) private readonly bus: MessageBus,
    @Inject(OBJECT_STORE) private readonly objects: ObjectStore,
    private readonly config: ApiConfig,
    private readonly webhooks: WebhookConfig,
  ) {}

  /**
   * Hands the uploads to whichever sandbox instance prepares the workspace, through the object
   * store (the bus carries keys, never bytes). The objects are only a hand-over: removed after.
   */
  private async prepareWorkspace(taskId: string, files: readonly StagedUpload[]): Promise<PrepareWorkspaceReply> {
    const refs: UploadRef[] = [];
    try {
      for (const [i, file] of files.entries()) {
        const objectKey = `uploads/${taskId}/${i}`;
        refs.push({ name: file.name, objectKey, size: 0 });
        const { size } = await this.objects.put(objectKey, createReadStream(file.stagedPath));
        refs[i] = { ...refs[i], size };
      }
      // Only an undelivered request is resent, so the workspace is never prepared twice.
      return await requestUntilDelivered<PrepareWorkspaceRequest, PrepareWorkspaceReply>(
        this.bus,
        SUBJECTS.sandboxPrepareWorkspace,
        { taskId, files: refs },
        { timeoutMs: 120_000 },
      );
    } finally {
      await Promise.all(refs.map((r) => this.objects.delete(r.objectKey).catch(() => undefined)));
    }
  }

  async execute({ tenantId, taskId, request, files, scheduleId }: CreateTaskCommand): Promise<CreatedTask> {
    // Checked before anything is written: a bad budget or server list leaves nothing behind.
    checkTokenBudgetCap(request.maxTokens, this.config.taskMaxTokensCap);
    const mcpServers = parseTaskMcpServers(request.mcpServers, Object.keys(request.secrets ?? {}));
    // Recorded with the task, the default too: where a task's webhooks go never changes with the configuration.
    // The default is marked as such: it is the operator's (it may carry a token), and is never shown to the tenant.
    // null is not given, as for every optional field (IsOptional lets it through unchecked).
    const requestedUrl = request.webhookUrl ?? undefined;
    const webhookUrlIsDefault = requestedUrl === undefined && this.webhooks.defaultUrl !== undefined;
    const webhookUrl = requestedUrl === undefined ? this.webhooks.defaultUrl?.href : checkWebhookUrl(requestedUrl, this.webhooks);
    const secrets = request.secrets ?? {};
    const hasSecrets = Object.keys(secrets).length > 0;
    if (hasSecrets && !this.secrets.canSeal) {
      throw new ValidationError(
        'secrets need SECRETS_KEY (or SECRETS_KEY_FILE) to be set on the service: they are stored encrypted with it',
      );
    }
    // Only the envelope is stored; every process that needs the values opens it with its own key.
    const sealedSecrets = hasSecrets ? this.secrets.seal(taskId, secrets) : undefined;
    const prepared = files.length > 0 ? await this.prepareWorkspace(taskId, files) : undefined;
    const uploaded = await Promise.all(files.map(async (f) => ({ name: f.name, size: (await stat(f.stagedPath)).size })));
    // This process (all-in-one: also the orchestrator and sandbox) need not open what it sealed.
    this.secrets.vault.put(taskId, secrets);
    // The default is recorded with the task: the budget in force never changes with the configuration.
    const maxTokens = request.maxTokens ?? this.config.taskMaxTokens;
    const maxCostUsd = request.maxCostUsd ?? this.config.taskMaxCostUsd;
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
        ...(sealedSecrets ? { sealedSecrets } : {}),
        files: uploaded,
        ...(Object.keys(mcpServers).length > 0 ? { mcpServers } : {}),
        ...(maxTokens === undefined ? {} : { maxTokens }),
        ...(maxCostUsd === undefined ? {} : { maxCostUsd }),
        ...(webhookUrl === undefined ? {} : { webhookUrl }),
        ...(prepared?.checkpoint ? { checkpoint: prepared.checkpoint } : {}),
        ...(webhookUrlIsDefault ? { webhookUrlIsDefault } : {}),
        ...(request.network ? { network: { allow: [...request.network.allow] } } : {}),
        ...(scheduleId === undefined ? {} : { scheduleId }),
      },
    };
    const { position } = await this.commands.execute(taskId, command).catch((error: unknown) => {
      this.secrets.vault.forget(taskId);
      throw error;
    });
    if (position !== undefined) await this.views.waitForPosition(position);
    return { id: taskId, status: 'pending' };
  }
}
