import { Inject, Injectable } from '@nestjs/common';
import { NotFoundError } from '@app/common';
import type { CheckpointSettings } from '@app/checkpoints';
import { checkpointSettingsFromEnv, recordedCheckpoints, retainedCheckpoints } from '@app/checkpoints';
import { EVENT_STORE, EventStore } from '@app/event-store';
import { RUNTIME_ENV } from '@app/runtime';
import type { CheckpointRef } from '@app/task-domain';

/** The workspace as of an event: which event, and the checkpoint it then stood at (none: nothing recorded yet). */
export interface WorkspaceAt {
  readonly at: number;
  readonly checkpoint?: CheckpointRef;
}

/**
 * Finds the checkpoint that was the workspace right after event `at` of a task: the last one
 * recorded at or before it (the uploads', a tool_result's, or the one a rollback brought back). The history is the only truth, so
 * it is read from there; CHECKPOINT_RETENTION says whether that checkpoint is still kept.
 */
@Injectable()
export class WorkspaceAtEvent {
  private readonly settings: CheckpointSettings;

  constructor(
    @Inject(EVENT_STORE) private readonly store: EventStore,
    @Inject(RUNTIME_ENV) env: NodeJS.ProcessEnv,
  ) {
    this.settings = checkpointSettingsFromEnv(env);
  }

  /** NotFoundError when the task has no event `at`, or its files then are no longer kept. */
  async find(taskId: string, at?: number): Promise<WorkspaceAt> {
    // The whole history once: "the last N" (CHECKPOINT_RETENTION) are the task's last N, not those up to `at`.
    const { checkpoints, emptiedAt, lastEventId } = await recordedCheckpoints(this.store, taskId);
    if (at !== undefined && lastEventId < at) throw new NotFoundError(`event ${at} of this task`);
    const asOf = at ?? lastEventId;
    const then = checkpoints.filter((c) => c.eventId <= asOf).at(-1);
    // A rollback since it brought back an empty workspace (docs/api.md "Follow-ups while a turn runs").
    const emptied = emptiedAt.filter((id) => id <= asOf).at(-1);
    if (!then || (emptied !== undefined && emptied > then.eventId)) return { at: asOf };
    if (!retainedCheckpoints(checkpoints, this.settings.retention, Date.now()).some((c) => c.eventId === then.eventId)) {
      throw new NotFoundError(`the files as of event ${asOf} (CHECKPOINT_RETENTION keeps them no longer)`);
    }
    return { at: asOf, checkpoint: then.ref };
  }
}
