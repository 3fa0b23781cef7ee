import { Module } from '@nestjs/common';
import { CqrsModule } from '@nestjs/cqrs';
import { APP_FILTER } from '@nestjs/core';
import { EVENT_STORE } from '@app/event-store';
import { Readiness } from '@app/metrics';
import { ObjectStoreReadiness, RUNTIME_ENV } from '@app/runtime';
import { WebhookConfig } from '@app/webhooks';
import { createCoordinationStore } from '@app/coordination';
import { ApiConfig } from './api.config';
import { ApproveToolCallHandler } from './approvals/approve-tool-call/approve-tool-call.handler';
import { ApproveToolCallHttpController } from './approvals/approve-tool-call/approve-tool-call.http.controller';
import { ArtifactsHttpController } from './artifacts/artifacts.http.controller';
import { WorkspaceFilesHttpController } from './files/workspace-files.http.controller';
import { WorkspaceAtEvent } from './files/workspace-at-event';
import { ApiKeyGuard } from './auth/api-key.guard';
import { ApiKeyRegistry } from './auth/api-key-registry';
import { AppExceptionFilter } from './errors/app-exception.filter';
import { OpenStreams } from './events-stream/open-streams';
import { TaskEventFeed } from './events-stream/task-event-feed';
import { TaskStreamHttpController } from './events-stream/task-stream.http.controller';
import { HealthController } from './health/health.controller';
import { TaskStatusMetrics } from './health/task-status-metrics';
import { RateLimitGuard } from './limits/rate-limit.guard';
import { TENANT_RATE_LIMIT } from './limits/limits.tokens';
import { RateLimiter, TenantRateLimit, UNLIMITED } from './limits/rate-limiter';
import { SendFollowUpHandler } from './messages/send-follow-up/send-follow-up.handler';
import { SendFollowUpHttpController } from './messages/send-follow-up/send-follow-up.http.controller';
import { CancelTaskHandler } from './tasks/cancel-task/cancel-task.handler';
import { CancelTaskHttpController } from './tasks/cancel-task/cancel-task.http.controller';
import { CreateTaskHandler } from './tasks/create-task/create-task.handler';
import { CreateTaskHttpController } from './tasks/create-task/create-task.http.controller';
import { ForkTaskHandler } from './tasks/fork-task/fork-task.handler';
import { ForkTaskHttpController } from './tasks/fork-task/fork-task.http.controller';
import { GetTaskHttpController } from './tasks/get-task/get-task.http.controller';
import { ListTaskEventsHttpController } from './tasks/list-task-events/list-task-events.http.controller';
import { ListTasksHttpController } from './tasks/list-tasks/list-tasks.http.controller';
import { TaskAccess } from './tasks/task-access';
import { ListWebhookDeliveriesHttpController } from './tasks/list-webhook-deliveries/list-webhook-deliveries.http.controller';
import { RedeliverWebhookHttpController } from './tasks/redeliver-webhook/redeliver-webhook.http.controller';
import { ScheduleBook } from './schedules/schedule-book';
import { ScheduleFirer } from './schedules/schedule-firer';
import { ScheduleFiring } from './schedules/schedule-firing';
import { scheduleFirer } from './schedules/schedule-firer.provider';
import { SchedulesConfig } from './schedules/schedules.config';
import { CreateScheduleHttpController } from './schedules/create-schedule/create-schedule.http.controller';
import { DeleteScheduleHttpController } from './schedules/delete-schedule/delete-schedule.http.controller';
import { GetScheduleHttpController } from './schedules/get-schedule/get-schedule.http.controller';
import { ListScheduleRunsHttpController } from './schedules/list-schedule-runs/list-schedule-runs.http.controller';
import { ListSchedulesHttpController } from './schedules/list-schedules/list-schedules.http.controller';
import { ScheduleAccess } from './schedules/schedule-access';
import { UpdateScheduleHttpController } from './schedules/update-schedule/update-schedule.http.controller';

/** The public HTTP API: auth, validation, commands into the event store, reads from projections, SSE. */
@Module({
  imports: [CqrsModule.forRoot()],
  controllers: [
    HealthController,
    CreateTaskHttpController,
    ListTasksHttpController,
    GetTaskHttpController,
    ListTaskEventsHttpController,
    ListWebhookDeliveriesHttpController,
    RedeliverWebhookHttpController,
    CancelTaskHttpController,
    ForkTaskHttpController,
    SendFollowUpHttpController,
    ApproveToolCallHttpController,
    TaskStreamHttpController,
    ArtifactsHttpController,
    WorkspaceFilesHttpController,
    CreateScheduleHttpController,
    ListSchedulesHttpController,
    GetScheduleHttpController,
    UpdateScheduleHttpController,
    DeleteScheduleHttpController,
    ListScheduleRunsHttpController,
  ],
  providers: [
    { provide: ApiConfig, inject: [RUNTIME_ENV], useFactory: (env: NodeJS.ProcessEnv) => new ApiConfig(env) },
    { provide: SchedulesConfig, inject: [RUNTIME_ENV], useFactory: (env: NodeJS.ProcessEnv) => new SchedulesConfig(env) },
    { provide: WebhookConfig, inject: [RUNTIME_ENV], useFactory: (env: NodeJS.ProcessEnv) => new WebhookConfig(env) },
    {
      provide: ApiKeyRegistry,
      inject: [RUNTIME_ENV, ApiConfig],
      useFactory: (env: NodeJS.ProcessEnv, c: ApiConfig) => ApiKeyRegistry.load(env, c.dataDir),
    },
    { provide: APP_FILTER, useClass: AppExceptionFilter },
    { provide: TENANT_RATE_LIMIT, inject: [RUNTIME_ENV, ApiConfig], useFactory: tenantRateLimit },
    ApiKeyGuard,
    RateLimitGuard,
    TaskAccess,
    WorkspaceAtEvent,
    TaskEventFeed,
    OpenStreams,
    CreateTaskHandler,
    CancelTaskHandler,
    ForkTaskHandler,
    SendFollowUpHandler,
    ApproveToolCallHandler,
    TaskStatusMetrics,
    ObjectStoreReadiness,
    ScheduleBook,
    ScheduleAccess,
    ScheduleFiring,
    { provide: ScheduleFirer, inject: [RUNTIME_ENV, ScheduleFiring, ScheduleBook, EVENT_STORE, Readiness], useFactory: scheduleFirer },
  ],
})
export class ApiModule {}

async function tenantRateLimit(env: NodeJS.ProcessEnv, config: ApiConfig): Promise<TenantRateLimit> {
  if (config.rateLimitPerMinute === undefined) return UNLIMITED;
  const windowMs = config.rateLimitWindowMs;
  // A key unwritten for a window holds nothing that still counts; the bucket forgets it soon after.
  // The window is in the bucket's name: a bucket keeps the TTL it was created with.
  const store = await createCoordinationStore(
    { bucket: `rate-limits-${windowMs}`, ttlMs: windowMs + Math.ceil(windowMs / 30) + 1_000 },
    env,
  );
  return new RateLimiter(store, { limit: config.rateLimitPerMinute, windowMs });
}
