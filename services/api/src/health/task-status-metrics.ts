import { Injectable } from '@nestjs/common';
import { ServiceMetrics } from '@app/metrics';
import { TaskViewsStore } from '@app/read-models';

/**
 * `ats_tasks` by status, counted from the API's read model at scrape time. Only the API serves
 * it: every service holds the same read model, and summing it over all of them would multiply it.
 */
@Injectable()
export class TaskStatusMetrics {
  constructor(metrics: ServiceMetrics, views: TaskViewsStore) {
    metrics.countTasksWith(() => views.countByStatus());
  }
}
