import { Inject } from '@nestjs/common';
import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import type { CheckpointSettings } from '@app/checkpoints';
import { checkpointSettingsFromEnv, checkpointsIn, lineageMemberKey, retainedCheckpoints } from '@app/checkpoints';
import { ConflictError, NotFoundError, SecretsUnavailableError, TaskSecrets, ValidationError, newId } from '@app/common';
import type { StoredEvent } from '@app/event-store';
import { OBJECT_STORE, ObjectStore } from '@app/object-store';
import { RUNTIME_ENV } from '@app/runtime';
import { TaskViewsStore } from '@app/read-models';
import { TaskCommandExecutor } from '@app/task-commands';
import type { ExistingTask, SealedSecrets } from '@app/task-domain';
import { toTaskEvent } from '@app/task-domain';
import { TaskAccess } from '../task-access';
import { ForkTaskCommand, ForkedTask } from './fork-task.command';

/**
 * A fork is written in one append to a new stream (all or nothing, however long the source): the
 * decider checks the fork point against the source's events and copies them. The source is only read.
 */
@CommandHandler(ForkTaskCommand)
export class ForkTaskHandler implements ICommandHandler<ForkTaskCommand, ForkedTask> {
  private readonly checkpointSettings: CheckpointSettings;

  constructor(
    private readonly tasks: TaskAccess,
    private readonly commands: TaskCommandExecutor,
    private readonly views: TaskViewsStore,
    private readonly secrets: TaskSecrets,
    @Inject(OBJECT_STORE) private readonly objects: ObjectStore,
    @Inject(RUNTIME_ENV) env: NodeJS.ProcessEnv,
  ) {
    this.checkpointSettings = checkpointSettingsFromEnv(env);
  }

  async execute({ tenantId, sourceTaskId, taskId, request }: ForkTaskCommand): Promise<ForkedTask> {
    await this.tasks.find(tenantId, sourceTaskId);
    const source = await this.commands.load(sourceTaskId);
    if (!source.state.exists) throw new NotFoundError('task');
    await this.joinLineage(source.events, request.afterEventId, taskId);
    const sealedSecrets = this.resealSecrets(sourceTaskId, taskId, source.state);
    const command = {
      type: 'ForkTask' as const,
      data: {
        taskId,
        source: { taskId: sourceTaskId, events: source.events.map(toTaskEvent) },
        afterEventId: request.afterEventId,
        ...(request.autoExecute === undefined ? {} : { autoExecute: request.autoExecute }),
        ...(sealedSecrets ? { sealedSecrets } : {}),
        ...(request.message === undefined ? {} : { message: { messageId: newId('msg'), text: request.message } }),
      },
    };
    const { position } = await this.commands.execute(taskId, command).catch((error: unknown) => {
      this.secrets.vault.forget(taskId);
      throw error;
    });
    if (position !== undefined) await this.views.waitForPosition(position);
    const fork = await this.tasks.find(tenantId, taskId);
    return { id: taskId, status: fork.status, forkedFrom: { taskId: sourceTaskId, eventId: request.afterEventId } };
  }

  /**
   * The fork's workspace is its source's checkpoint at the fork point, which the fork's copied
   * history names: it must still be kept (CHECKPOINT_RETENTION), and the fork joins the source's
   * fork tree, so garbage collection keeps what the fork names after the source has moved on.
   * Written before the fork is: a collection never sees the fork without its marker.
   */
  private async joinLineage(events: readonly StoredEvent[], afterEventId: number, taskId: string): Promise<void> {
    const atFork = checkpointsIn(events.slice(0, afterEventId)).at(-1);
    if (!atFork) return;
    const kept = retainedCheckpoints(checkpointsIn(events), this.checkpointSettings.retention, Date.now());
    if (!kept.some((c) => c.eventId === atFork.eventId)) {
      throw new ConflictError(
        `the workspace as of event ${afterEventId} is no longer kept (CHECKPOINT_RETENTION), so the task cannot be forked there`,
      );
    }
    await this.objects.put(lineageMemberKey(atFork.ref.lineage, taskId), Buffer.alloc(0));
  }

  /**
   * The envelope authenticates its task's id (docs/operations/security.md "Secrets at rest"), so
   * the source's would not open as the fork's: the values are opened here and sealed again for
   * the fork, which then holds an envelope of its own like any task. This process keeps them.
   */
  private resealSecrets(sourceTaskId: string, taskId: string, source: ExistingTask): SealedSecrets | undefined {
    // A task from before secrets were durable has names and no envelope: the fork is the same.
    if (source.secretNames.length === 0 || !source.sealedSecrets) return undefined;
    if (!this.secrets.canSeal) {
      throw new ValidationError('forking a task with secrets needs SECRETS_KEY (or SECRETS_KEY_FILE) to be set on the service');
    }
    let values: Readonly<Record<string, string>>;
    try {
      values = this.secrets.open(sourceTaskId, source);
    } catch (error) {
      if (!(error instanceof SecretsUnavailableError)) throw error;
      throw new ValidationError(`the task's secrets cannot be carried into a fork: ${error.message}`);
    }
    const sealed = this.secrets.seal(taskId, values);
    this.secrets.vault.put(taskId, values);
    return sealed;
  }
}
