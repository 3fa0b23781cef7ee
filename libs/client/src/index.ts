export { AtsClient, ArtifactsApi, SchedulesApi, TasksApi, WebhookDeliveriesApi, WorkspaceFilesApi } from './client';
export type { AtsClientOptions, CreateTaskInput, ListTasksOptions, PageOptions, TaskEventsOptions, WorkspaceFilesOptions } from './client';
export { AtsError } from './errors';
export type { ClientErrorCode } from './errors';
export type { ArtifactDownload, UploadFile } from './multipart';
export type { StreamOptions } from './task-stream';
export type { RetryPolicy } from './backoff';
export type * from './types';
export type { paths, components, operations } from './generated/openapi';
