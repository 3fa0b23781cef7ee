import createOpenApiClient from 'openapi-fetch';
import type { RetryPolicy } from './backoff';
import { DEFAULT_REQUEST_RETRY } from './backoff';
import { errorFromResponse } from './errors';
import type { paths } from './generated/openapi';
import type { StreamOptions } from './task-stream';
import { streamTaskEvents } from './task-stream';
import { Transport } from './transport';
import type {
  ApprovalOutcome,
  ArtifactFile,
  CancelledTask,
  CreateScheduleRequest,
  CreateTaskRequest,
  DeletedSchedule,
  Schedule,
  SchedulePage,
  ScheduleRun,
  ScheduleRunPage,
  UpdateScheduleRequest,
  CreatedTask,
  FollowUpAccepted,
  ForkTaskRequest,
  ForkedTask,
  SendMessageRequest,
  Task,
  TaskEventPage,
  TaskEventRecord,
  TaskPage,
  TaskStreamEvent,
  ToolCallDecision,
  WebhookDelivery,
  WorkspaceFile,
  WorkspaceFilePage,
} from './types';
import type { ArtifactDownload, UploadFile } from './multipart';
import { createTaskForm, readDownload } from './multipart';

export interface AtsClientOptions {
  /** Where the service listens, e.g. http://127.0.0.1:3000. */
  readonly baseUrl: string;
  /** An API key of API_KEYS: sent as `Authorization: Bearer <key>`. */
  readonly apiKey: string;
  /** Retries of reads (GET) that failed without an answer or with 502/503/504; writes are never retried. */
  readonly retry?: Partial<RetryPolicy>;
  /** How long to wait for an answer's headers (default 30 s). */
  readonly timeoutMs?: number;
  /** A fetch to use instead of the global one (a proxy agent, instrumentation). */
  readonly fetch?: (request: Request) => Promise<Response>;
}

export type CreateTaskInput = CreateTaskRequest & {
  /** Files put into the workspace before the agent starts; sends the task as multipart/form-data. */
  readonly files?: readonly UploadFile[];
};

export interface ListTasksOptions {
  /** Also tasks created with showInHistory: false. */
  readonly includeHidden?: boolean;
  /** Page size (1–100). */
  readonly limit?: number;
}

export interface TaskEventsOptions {
  /** Start after this event id (0, the default: from event 1). */
  readonly after?: number;
  /** Page size (1–1000, default 200). */
  readonly limit?: number;
}

/**
 * A typed client of the agentic task service. Every method resolves to the envelope's `data` (or
 * the artifact list) and throws an AtsError carrying the service's `code`, `status` and `message`.
 */
export class AtsClient {
  readonly tasks: TasksApi;
  readonly artifacts: ArtifactsApi;
  readonly files: WorkspaceFilesApi;
  readonly webhookDeliveries: WebhookDeliveriesApi;
  readonly schedules: SchedulesApi;
  private readonly api: ReturnType<typeof createOpenApiClient<paths>>;

  constructor(options: AtsClientOptions) {
    const transport = new Transport({
      baseUrl: options.baseUrl,
      apiKey: options.apiKey,
      fetch: options.fetch ?? ((request) => fetch(request)),
      retry: { ...DEFAULT_REQUEST_RETRY, ...options.retry },
      timeoutMs: options.timeoutMs ?? 30_000,
    });
    this.api = createOpenApiClient<paths>({ baseUrl: transport.url(''), fetch: (request) => transport.send(request) });
    this.tasks = new TasksApi(this.api, transport);
    this.artifacts = new ArtifactsApi(this.api);
    this.files = new WorkspaceFilesApi(this.api);
    this.webhookDeliveries = new WebhookDeliveriesApi(this.api);
    this.schedules = new SchedulesApi(this.api);
  }

  /** `{status: "ok"}` once the service accepts tasks. */
  async health(): Promise<{ status: 'ok' }> {
    return unwrap(await this.api.GET('/healthz'));
  }
}

type Api = AtsClient['api'];

export interface PageOptions {
  /** Page size (1–100). */
  readonly limit?: number;
  /** The nextCursor of the previous page. */
  readonly cursor?: string;
}

/** Schedules: a task, or a follow-up into `target`, at each due time of a cron (docs/api.md "Schedules"). */
export class SchedulesApi {
  constructor(private readonly api: Api) {}

  async create(request: CreateScheduleRequest): Promise<Schedule> {
    return data(await this.api.POST('/api/v1/schedules', { body: request }));
  }

  async get(scheduleId: string): Promise<Schedule> {
    return data(await this.api.GET('/api/v1/schedules/{id}', { params: { path: { id: scheduleId } } }));
  }

  /** One page of the caller's schedules, newest first. */
  async listPage(options: PageOptions = {}): Promise<SchedulePage> {
    return data(await this.api.GET('/api/v1/schedules', { params: { query: options } }));
  }

  /** Every schedule of the caller, newest first, fetching pages as the loop goes on. */
  async *list(options: Omit<PageOptions, 'cursor'> = {}): AsyncGenerator<Schedule> {
    let cursor: string | undefined;
    do {
      const page = await this.listPage({ ...options, cursor });
      yield* page.schedules;
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
  }

  /** Changes cron, timezone or overlap; `paused` pauses (true) or resumes (false). */
  async update(scheduleId: string, request: UpdateScheduleRequest): Promise<Schedule> {
    return data(await this.api.PATCH('/api/v1/schedules/{id}', { params: { path: { id: scheduleId } }, body: request }));
  }

  async pause(scheduleId: string): Promise<Schedule> {
    return this.update(scheduleId, { paused: true });
  }

  async resume(scheduleId: string): Promise<Schedule> {
    return this.update(scheduleId, { paused: false });
  }

  async delete(scheduleId: string): Promise<DeletedSchedule> {
    return data(await this.api.DELETE('/api/v1/schedules/{id}', { params: { path: { id: scheduleId } } }));
  }

  /** One page of the schedule's runs, newest first. */
  async runsPage(scheduleId: string, options: PageOptions = {}): Promise<ScheduleRunPage> {
    return data(await this.api.GET('/api/v1/schedules/{id}/runs', { params: { path: { id: scheduleId }, query: options } }));
  }

  /** Every run of the schedule, newest first. */
  async *runs(scheduleId: string, options: Omit<PageOptions, 'cursor'> = {}): AsyncGenerator<ScheduleRun> {
    let cursor: string | undefined;
    do {
      const page = await this.runsPage(scheduleId, { ...options, cursor });
      yield* page.runs;
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
  }
}

export class TasksApi {
  constructor(
    private readonly api: Api,
    private readonly transport: Transport,
  ) {}

  /** Creates a task; it runs in the background. With `files`, sends multipart/form-data. */
  async create(input: CreateTaskInput): Promise<CreatedTask> {
    const { files, ...fields } = input;
    if (!files || files.length === 0) return data(await this.api.POST('/api/v1/tasks', { body: fields }));
    const form = createTaskForm(fields, files);
    return data(await this.api.POST('/api/v1/tasks', { body: form as never, bodySerializer: (body: unknown) => body }));
  }

  async get(taskId: string): Promise<Task> {
    return data(await this.api.GET('/api/v1/tasks/{id}', { params: { path: { id: taskId } } }));
  }

  /** One page of the caller's tasks, newest first; pass its nextCursor for the next one. */
  async listPage(options: ListTasksOptions & { cursor?: string } = {}): Promise<TaskPage> {
    return data(await this.api.GET('/api/v1/tasks', { params: { query: options } }));
  }

  /** Every task of the caller, newest first, fetching pages as the loop goes on. */
  async *list(options: ListTasksOptions = {}): AsyncGenerator<Task> {
    let cursor: string | undefined;
    do {
      const page = await this.listPage({ ...options, cursor });
      yield* page.tasks;
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
  }

  /**
   * A follow-up in the same workspace: starts the next turn, or waits behind the running one; with
   * `ifRunning` it is refused (409), or stops the running turn (`interrupt`) and undoes it (`rollback`).
   */
  async sendMessage(taskId: string, message: string | SendMessageRequest): Promise<FollowUpAccepted> {
    const body = typeof message === 'string' ? { message } : message;
    return data(await this.api.POST('/api/v1/tasks/{id}/messages', { params: { path: { id: taskId } }, body }));
  }

  async cancel(taskId: string): Promise<CancelledTask> {
    return data(await this.api.POST('/api/v1/tasks/{id}/cancel', { params: { path: { id: taskId } } }));
  }

  /**
   * A new task with the task's events up to `afterEventId` (a `message`, `tool_result` or `done`),
   * going on from there; `message` starts a turn in a fork taken after a `done`. The source is unchanged.
   */
  async fork(taskId: string, request: ForkTaskRequest): Promise<ForkedTask> {
    return data(await this.api.POST('/api/v1/tasks/{id}/fork', { params: { path: { id: taskId } }, body: request }));
  }

  /** Decides a tool call of a task created with autoExecute: false. A call already decided is a CONFLICT. */
  async approve(taskId: string, callId: string, outcome: ApprovalOutcome = 'proceed_once'): Promise<ToolCallDecision> {
    return data(
      await this.api.POST('/api/v1/tasks/{id}/tools/{callId}/approve', { params: { path: { id: taskId, callId } }, body: { outcome } }),
    );
  }

  /** One page of the task's recorded events, oldest first; pass its nextAfter as `after` for the next one. */
  async eventsPage(taskId: string, options: TaskEventsOptions = {}): Promise<TaskEventPage> {
    const { after, limit } = options;
    const query = { ...(after === undefined ? {} : { after: String(after) }), ...(limit === undefined ? {} : { limit }) };
    return data(await this.api.GET('/api/v1/tasks/{id}/events', { params: { path: { id: taskId }, query } }));
  }

  /**
   * The audit trail: every event the task has recorded so far (after `after`), oldest first, each
   * with its id and the time the service recorded it, fetching pages as the loop goes on. It ends
   * at the latest event; `stream` follows a running turn live.
   */
  async *history(taskId: string, options: TaskEventsOptions = {}): AsyncGenerator<TaskEventRecord> {
    let after = options.after;
    do {
      const page = await this.eventsPage(taskId, { ...options, after });
      yield* page.events;
      after = page.nextAfter;
    } while (after !== undefined);
  }

  /**
   * The task's events as they happen, each once and in order, ending after the `done` of the turn
   * it follows; reconnects with Last-Event-ID when the connection drops (see StreamOptions).
   */
  stream(taskId: string, options: StreamOptions = {}): AsyncGenerator<TaskStreamEvent> {
    return streamTaskEvents(this.transport, taskId, options);
  }
}

export class ArtifactsApi {
  constructor(private readonly api: Api) {}

  /** The files the agent wrote under downloads/. */
  async list(taskId: string): Promise<ArtifactFile[]> {
    return unwrap(await this.api.GET('/api/v1/tasks/{id}/artifacts', { params: { path: { id: taskId } } })).files;
  }

  /** One artifact's bytes with its name and type, read whole; `downloadStream` for large files. */
  async download(taskId: string, path: string): Promise<ArtifactDownload<Uint8Array>> {
    const file = await this.downloadStream(taskId, path);
    return { ...file, body: new Uint8Array(await new Response(file.body).arrayBuffer()) };
  }

  /** One artifact as a byte stream, for files too large to hold in memory. */
  async downloadStream(taskId: string, path: string): Promise<ArtifactDownload<ReadableStream<Uint8Array>>> {
    const { response, error } = await this.api.GET('/api/v1/tasks/{id}/artifacts/download', {
      params: { path: { id: taskId }, query: { path } },
      parseAs: 'stream',
    });
    if (!response.ok) throw errorFromResponse(response, error);
    return readDownload(response);
  }
}

export interface WorkspaceFilesOptions {
  /** An event id: the workspace as it was right after that event (default: after the last one). */
  readonly at?: number;
  /** Page size (1–1000, default 200). */
  readonly limit?: number;
  /** The nextCursor of the previous page. */
  readonly cursor?: string;
}

/** The workspace as of any event of the task (time travel), read from its checkpoints. */
export class WorkspaceFilesApi {
  constructor(private readonly api: Api) {}

  /** One page of the workspace's files as of `at`. */
  async list(taskId: string, options: WorkspaceFilesOptions = {}): Promise<WorkspaceFilePage> {
    const query = {
      ...(options.at === undefined ? {} : { at: String(options.at) }),
      ...(options.limit === undefined ? {} : { limit: options.limit }),
      ...(options.cursor === undefined ? {} : { cursor: options.cursor }),
    };
    return data(await this.api.GET('/api/v1/tasks/{id}/files', { params: { path: { id: taskId }, query } }));
  }

  /** Every file as of `at`, page after page. */
  async *listAll(taskId: string, options: Omit<WorkspaceFilesOptions, 'cursor'> = {}): AsyncGenerator<WorkspaceFile> {
    let cursor: string | undefined;
    do {
      const page = await this.list(taskId, { ...options, cursor });
      yield* page.files;
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
  }

  /** One file's bytes as of `at`, read whole; `downloadStream` for large files. */
  async download(taskId: string, path: string, options: { readonly at?: number } = {}): Promise<ArtifactDownload<Uint8Array>> {
    const file = await this.downloadStream(taskId, path, options);
    return { ...file, body: new Uint8Array(await new Response(file.body).arrayBuffer()) };
  }

  async downloadStream(
    taskId: string,
    path: string,
    options: { readonly at?: number } = {},
  ): Promise<ArtifactDownload<ReadableStream<Uint8Array>>> {
    const { response, error } = await this.api.GET('/api/v1/tasks/{id}/files/download', {
      params: { path: { id: taskId }, query: { path, ...(options.at === undefined ? {} : { at: String(options.at) }) } },
      parseAs: 'stream',
    });
    if (!response.ok) throw errorFromResponse(response, error);
    return readDownload(response);
  }
}

export class WebhookDeliveriesApi {
  constructor(private readonly api: Api) {}

  /** The task's webhook messages, oldest first, each with every attempt to deliver it. */
  async list(taskId: string): Promise<WebhookDelivery[]> {
    return data(await this.api.GET('/api/v1/tasks/{id}/webhook-deliveries', { params: { path: { id: taskId } } })).deliveries;
  }

  /**
   * Sends a delivered or failed message again (same webhook-id and body, a new round of attempts);
   * resolves to its delivery, pending. A message still pending is a CONFLICT.
   */
  async redeliver(taskId: string, deliveryId: string): Promise<WebhookDelivery> {
    return data(
      await this.api.POST('/api/v1/tasks/{id}/webhook-deliveries/{deliveryId}/redeliver', {
        params: { path: { id: taskId, deliveryId } },
      }),
    );
  }
}

/** The body of a 2xx answer, or the AtsError of any other. */
function unwrap<T>(result: { data?: T; error?: unknown; response: Response }): T {
  if (!result.response.ok || result.data === undefined) throw errorFromResponse(result.response, result.error);
  return result.data;
}

/** The `data` of a 2xx answer's `{success: true, data}` envelope. */
const data = <T>(result: { data?: { data: T }; error?: unknown; response: Response }): T => unwrap(result).data;
