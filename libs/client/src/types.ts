import type { components } from './generated/openapi';

// Names for the document's schemas (docs/openapi.json, generated into ./generated/openapi.ts).

type Schemas = components['schemas'];

export type Task = Schemas['Task'];
export type TaskStatus = Task['status'];
export type TaskPage = Schemas['TaskPage'];
export type CreatedTask = Schemas['CreatedTask'];
export type CreateTaskRequest = Schemas['CreateTaskRequestDto'];
/** Where a task's commands may connect (SANDBOX_NETWORK=egress): the create field `network`, as the task view shows it. */
export type TaskNetwork = NonNullable<Task['network']>;
export type SendMessageRequest = Schemas['SendFollowUpRequestDto'];
export type FollowUpAccepted = Schemas['FollowUpAccepted'];
export type CancelledTask = Schemas['CancelledTask'];
export type ForkTaskRequest = Schemas['ForkTaskRequestDto'];
export type ForkedTask = Schemas['ForkedTask'];
export type ApprovalOutcome = Schemas['ApproveToolCallRequestDto']['outcome'];
export type ToolCallDecision = Schemas['ToolCallDecision'];
export type ArtifactFile = Schemas['ArtifactFile'];
export type WorkspaceFile = Schemas['WorkspaceFile'];
export type WorkspaceFilePage = Schemas['WorkspaceFilePage'];
export type WorkspaceChange = NonNullable<Extract<TaskEvent, { type: 'tool_result' }>['data']['changes']>[number];
export type WebhookDelivery = Schemas['WebhookDelivery'];
export type WebhookAttempt = Schemas['WebhookAttempt'];

export type Schedule = Schemas['Schedule'];
export type SchedulePage = Schemas['SchedulePage'];
export type ScheduleRun = Schemas['ScheduleRun'];
export type ScheduleRunPage = Schemas['ScheduleRunPage'];
export type DeletedSchedule = Schemas['DeletedSchedule'];
export type CreateScheduleRequest = Schemas['CreateScheduleRequestDto'];
export type UpdateScheduleRequest = Schemas['UpdateScheduleRequestDto'];

/** One event of a task's stream, as the `data:` line carries it: `{type, data}`. */
export type TaskEvent = Schemas['TaskEvent'];
export type TaskEventType = TaskEvent['type'];
/** A stream event with its id (the SSE `id:`; 1, 2, 3, … over the task's whole history). */
export type TaskStreamEvent = TaskEvent & { readonly id: number };
/** A stream event as the history lists it: with its id and `at`, when the service recorded it. */
export type TaskEventRecord = Schemas['TaskEventRecord'];
export type TaskEventPage = Schemas['TaskEventPage'];

/** The `code` of every error answer the document lists. */
export type ServiceErrorCode = {
  [K in keyof components['responses']]: components['responses'][K]['content']['application/json']['error']['code'];
}[keyof components['responses']];
