import { Injectable } from '@nestjs/common';
import { NotFoundError } from '@app/common';
import { TaskViewsStore } from '@app/read-models';
import { TaskView } from '@app/task-domain';

/**
 * Reads a task for a tenant; another tenant's task is indistinguishable from a missing one.
 * With several API instances the local read model may lag the store by a moment, so the view is
 * first brought up to what the store holds: a task created or advanced through another instance
 * is never reported missing or stale (one indexed read, shared by concurrent requests).
 */
@Injectable()
export class TaskAccess {
  constructor(private readonly views: TaskViewsStore) {}

  async find(tenantId: string, taskId: string): Promise<TaskView> {
    await this.views.refresh();
    const view = this.views.get(taskId);
    if (!view || view.tenantId !== tenantId) throw new NotFoundError('task');
    return view;
  }
}
