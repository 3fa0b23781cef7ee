import { Logger } from '@nestjs/common';
import type { CheckpointReader, CheckpointSettings } from '@app/checkpoints';
import { collectLineage } from '@app/checkpoints';
import type { EventStore } from '@app/event-store';
import type { ObjectStore } from '@app/object-store';
import type { TaskCommandExecutor } from '@app/task-commands';

/**
 * Removes the checkpoint objects no kept checkpoint names (CHECKPOINT_RETENTION), one fork tree
 * at a time, when a task's sandbox has expired: the task is at rest then, and a tree is collected
 * at most once per sweep however many of its tasks expired.
 */
export class CheckpointCollector {
  private readonly logger = new Logger('Checkpoints');

  constructor(
    private readonly deps: { readonly objects: ObjectStore; readonly reader: CheckpointReader; readonly store: EventStore },
    private readonly commands: TaskCommandExecutor,
    private readonly settings: CheckpointSettings,
  ) {}

  async afterExpiry(taskIds: readonly string[]): Promise<void> {
    const lineages = new Set<string>();
    for (const taskId of taskIds) {
      const { state } = await this.commands.load(taskId);
      if (state.exists && state.lastCheckpoint) lineages.add(state.lastCheckpoint.lineage);
    }
    for (const lineage of lineages) {
      try {
        const { kept, deleted } = await collectLineage(this.deps, lineage, {
          retention: this.settings.retention,
          graceMs: this.settings.gcGraceMs,
          now: Date.now(),
        });
        if (deleted.length > 0) this.logger.log(`checkpoints of ${lineage}: ${deleted.length} object(s) removed, ${kept} kept`);
      } catch (error) {
        this.logger.warn(`checkpoints of ${lineage} could not be collected: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
  }
}
