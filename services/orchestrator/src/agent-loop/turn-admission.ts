import type { TaskViewsStore } from '@app/read-models';
import { turnQueuePlace } from '@app/task-domain';
import { mayStartTurn } from './turn-admission.rule';

/**
 * MAX_RUNNING_TASKS_PER_TENANT in the agent loop: whether a waiting turn may start, and which
 * tasks to wake when a turn ends, from the tenant's line in this process's read model (rule and
 * reasoning in turn-admission.rule.ts). The read model is first brought up to what
 * the store holds, so a turn that ended anywhere before the question is seen.
 */
export class TurnAdmission {
  constructor(
    private readonly views: TaskViewsStore,
    private readonly limit: number,
  ) {}

  /** May the turn of `messageId`, the task's oldest waiting message, start now? */
  async mayStart(tenantId: string, taskId: string, messageId: string): Promise<boolean> {
    await this.views.refresh();
    const line = this.views.turnQueue(tenantId);
    // Not waiting there (its turn started, or was dropped, meanwhile): the event that did it wakes the loop.
    const place = line.find((e) => e.taskId === taskId)?.waiting.find((m) => m.messageId === messageId)?.position;
    if (place === undefined) return false;
    return mayStartTurn(
      place,
      line.map(turnQueuePlace).filter((p): p is number => p !== undefined),
      this.limit,
    );
  }

  /** The tenant's waiting tasks that a free slot could admit: the first `limit` of them in line. */
  async headOfLine(tenantId: string): Promise<string[]> {
    await this.views.refresh();
    return this.views
      .turnQueue(tenantId)
      .filter((e) => e.running === undefined)
      .sort((a, b) => (turnQueuePlace(a) ?? 0) - (turnQueuePlace(b) ?? 0))
      .slice(0, this.limit)
      .map((e) => e.taskId);
  }
}
