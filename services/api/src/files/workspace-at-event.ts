import { Inject, Injectable } from '@nestjs/common';
import { NotFoundError, taskStreamId } from '@app/common';
import { EVENT_STORE, EventStore } from '@app/event-store';
import type { CheckpointRef } from '@app/task-domain';
import { toTaskEvent } from '@app/task-domain';

/** Events read per page while looking for a checkpoint. */
const READ_PAGE = 500;

/** The workspace as of an event: which event, and the checkpoint it then stood at (none: nothing recorded yet). */
export interface WorkspaceAt {
  readonly at: number;
  readonly checkpoint?: CheckpointRef;
}

/**
 * Finds the checkpoint that was the workspace right after event `at` of a task: the last one
 * recorded at or before it (the uploads', or a tool_result's). The history is the only truth, so it is read from there.
 */
@Injectable()
export class WorkspaceAtEvent {
  constructor(@Inject(EVENT_STORE) private readonly store: EventStore) {}

  /** NotFoundError when the task has no event `at`. */
  async find(taskId: string, at?: number): Promise<WorkspaceAt> {
    let checkpoint: CheckpointRef | undefined;
    let last = 0;
    for (let from = 1; at === undefined || from <= at; from += READ_PAGE) {
      const maxCount = at === undefined ? READ_PAGE : Math.min(READ_PAGE, at - from + 1);
      const page = await this.store.readStream(taskStreamId(taskId), { fromRevision: from, maxCount });
      for (const stored of page) {
        last = stored.revision;
        const event = toTaskEvent(stored);
        // The uploads' checkpoint rides on TaskCreated, each step's on its tool_result.
        if ((event.type === 'TaskCreated' || event.type === 'ToolCallFinished') && event.data.checkpoint)
          checkpoint = event.data.checkpoint;
      }
      if (page.length < maxCount) break;
    }
    if (at !== undefined && last < at) throw new NotFoundError(`event ${at} of this task`);
    return { at: at ?? last, ...(checkpoint ? { checkpoint } : {}) };
  }
}
