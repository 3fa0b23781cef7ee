import { Injectable } from '@nestjs/common';
import { NotFoundError } from '@app/common';
import { TaskViewsStore } from '@app/read-models';
import { TaskView } from '@app/task-domain';

/** Reads a task for a tenant; another tenant's task is indistinguishable from a missing one. */
@Injectable()
export class TaskAccess {
  constructor(private readonly views: TaskViewsStore) {}

  find(tenantId: string, taskId: string): TaskView {
    const view = this.views.get(taskId);
    if (!view || view.tenantId !== tenantId) throw new NotFoundError('task');
    return view;
  }
}
