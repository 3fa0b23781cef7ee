import type { ResponseObject } from '@nestjs/swagger';
import type { ErrorCode } from '@app/common';
import { HTTP_STATUS_BY_CODE } from '@app/common';
import { envelope, errorEnvelope, ref } from './schemas';

// What each operation answers, by "METHOD path": its method-like id and every status it can return
// (docs/api.md "Endpoints" and "Errors"). The controllers' decorators give the paths, parameters
// and request bodies; this table is the one place for the answers.

type Schema = Record<string, unknown>;
type Responses = Record<string, Schema>;

const json = (schema: Schema, description: string): Schema => ({ description, content: { 'application/json': { schema } } });

/** A message each code may carry, as the examples of the error answers. */
const EXAMPLE_MESSAGES: Record<ErrorCode, string> = {
  VALIDATION_ERROR: 'message must be a non-empty string',
  AUTH_REQUIRED: 'Authorization header with a Bearer API key is required',
  INVALID_API_KEY: 'The API key is invalid or expired',
  NOT_FOUND: 'Task task_0123456789abcdef0123456789abcdef not found',
  CONFLICT: 'call call_0123 is not awaiting approval',
  PAYLOAD_TOO_LARGE: 'request body exceeds UPLOAD_MAX_BYTES',
  RATE_LIMITED: 'Rate limit reached: too many task creates and follow-ups for this tenant (RATE_LIMIT_PER_MINUTE); retry in 60 s',
  INTERNAL: 'Internal error',
};

/** The codes answered with a status: HTTP_STATUS_BY_CODE, plus the two statuses Node's own refusals add. */
const codesOf = (status: number): ErrorCode[] =>
  status === 431
    ? ['PAYLOAD_TOO_LARGE']
    : status === 408
      ? ['VALIDATION_ERROR']
      : (Object.keys(HTTP_STATUS_BY_CODE) as ErrorCode[]).filter((code) => HTTP_STATUS_BY_CODE[code] === status);

/** The error envelope, its `code` narrowed to the codes of the status, with an example of each. */
const error = (status: number, description: string, extra: Schema = {}): ResponseObject => {
  const codes = codesOf(status);
  return {
    description: `${codes.join(' or ')}: ${description}`,
    ...extra,
    content: {
      'application/json': {
        schema: errorEnvelope(codes),
        examples: Object.fromEntries(
          codes.map((code) => [code, { value: { success: false, error: { code, message: EXAMPLE_MESSAGES[code] } } }]),
        ),
      },
    },
  };
};

const RETRY_AFTER = {
  'Retry-After': { description: 'Whole seconds until one more request fits.', schema: { type: 'integer', minimum: 1 } },
};

/** Error answers by status, shared by the operations (components.responses). */
export const ERROR_RESPONSES: Record<string, ResponseObject> = {
  BadRequest: error(400, 'a request value is invalid (the message names the field), a body that is not JSON, a malformed URL or request'),
  Unauthorized: error(401, 'no `Authorization: Bearer <key>` header, or a key the service does not know'),
  NotFound: error(
    404,
    "unknown task (or another tenant's), schedule (or another tenant's), tool call, artifact, webhook delivery or event to fork after; an id longer than 100 characters",
  ),
  Conflict: error(
    409,
    'the tool call is no longer awaiting approval (decided, expired, task cancelled), the webhook delivery is still pending ' +
      'or was redelivered 10 times already, the event to fork after is not a message, tool_result or done (the message names ' +
      'the nearest that are), a schedule past MAX_SCHEDULES_PER_TENANT, or a concurrent change won: retry',
  ),
  RequestTimeout: error(408, 'the request was not received in time (headers or body stalled)'),
  PayloadTooLarge: error(
    413,
    'a body over UPLOAD_MAX_BYTES (any route that reads a body), more than UPLOAD_MAX_FILES files, an archive over its limits; ' +
      'on any route, chunk extensions of a chunked body over 16 KiB (the connection is closed)',
  ),
  RateLimited: error(429, 'more creates, forks and follow-ups than RATE_LIMIT_PER_MINUTE for the tenant', { headers: RETRY_AFTER }),
  HeadersTooLarge: error(431, 'request headers over 16 KiB; the connection is closed'),
  Internal: error(500, 'an unexpected failure; the message is generic, never internals'),
};

const refTo = (name: string): Schema => ({ $ref: `#/components/responses/${name}` });
/**
 * What Node and Fastify answer on any route before it runs: a malformed URL or request, one
 * received too slowly, chunk extensions or headers too large.
 */
const BEFORE_ANY_ROUTE: Responses = {
  '400': refTo('BadRequest'),
  '408': refTo('RequestTimeout'),
  '413': refTo('PayloadTooLarge'),
  '431': refTo('HeadersTooLarge'),
};
/** ...and a failure of what the route calls. */
const ALWAYS: Responses = { ...BEFORE_ANY_ROUTE, '500': refTo('Internal') };
const AUTHENTICATED: Responses = { ...ALWAYS, '401': refTo('Unauthorized') };
const OF_A_TASK: Responses = { ...AUTHENTICATED, '404': refTo('NotFound') };

export interface OperationAnswers {
  readonly operationId: string;
  readonly responses: Responses;
  /** Request body content types whose schema no DTO gives (multipart's text-encoded fields). */
  readonly requestContent?: Record<string, Schema>;
}

export const OPERATIONS: Record<string, OperationAnswers> = {
  'POST /api/v1/schedules': {
    operationId: 'createSchedule',
    responses: {
      '201': json(envelope('Schedule'), 'The schedule is created; its first run comes at nextRunAt.'),
      '400': refTo('BadRequest'),
      '404': refTo('NotFound'),
      '409': refTo('Conflict'),
      ...AUTHENTICATED,
    },
  },
  'GET /api/v1/schedules': {
    operationId: 'listSchedules',
    responses: {
      '200': json(envelope('SchedulePage'), "A page of the caller's schedules, newest first."),
      '400': refTo('BadRequest'),
      ...AUTHENTICATED,
    },
  },
  'GET /api/v1/schedules/{id}': {
    operationId: 'getSchedule',
    responses: { '200': json(envelope('Schedule'), 'The schedule.'), ...OF_A_TASK },
  },
  'PATCH /api/v1/schedules/{id}': {
    operationId: 'updateSchedule',
    responses: {
      '200': json(envelope('Schedule'), 'The schedule as changed.'),
      '400': refTo('BadRequest'),
      ...OF_A_TASK,
    },
  },
  'DELETE /api/v1/schedules/{id}': {
    operationId: 'deleteSchedule',
    responses: {
      '200': json(envelope('DeletedSchedule'), 'The schedule is deleted: no run after this.'),
      ...OF_A_TASK,
    },
  },
  'GET /api/v1/schedules/{id}/runs': {
    operationId: 'listScheduleRuns',
    responses: {
      '200': json(envelope('ScheduleRunPage'), "A page of the schedule's runs, newest first."),
      '400': refTo('BadRequest'),
      ...OF_A_TASK,
    },
  },
  'POST /api/v1/tasks': {
    operationId: 'createTask',
    requestContent: { 'multipart/form-data': { schema: ref('CreateTaskForm') } },
    responses: {
      '201': json(envelope('CreatedTask'), 'The task is created; it runs in the background.'),
      '400': refTo('BadRequest'),
      '413': refTo('PayloadTooLarge'),
      '429': refTo('RateLimited'),
      ...AUTHENTICATED,
    },
  },
  'GET /api/v1/tasks': {
    operationId: 'listTasks',
    responses: {
      '200': json(envelope('TaskPage'), "A page of the caller's tasks, newest first."),
      '400': refTo('BadRequest'),
      ...AUTHENTICATED,
    },
  },
  'GET /api/v1/tasks/{id}': {
    operationId: 'getTask',
    responses: { '200': json(envelope('Task'), 'The task.'), ...OF_A_TASK },
  },
  'GET /api/v1/tasks/{id}/events': {
    operationId: 'listTaskEvents',
    responses: {
      '200': json(
        envelope('TaskEventPage'),
        "A page of the task's events, oldest first, as the stream replays them, each with the time the service recorded it.",
      ),
      '400': refTo('BadRequest'),
      ...OF_A_TASK,
    },
  },
  'GET /api/v1/tasks/{id}/webhook-deliveries': {
    operationId: 'listWebhookDeliveries',
    responses: {
      '200': json(envelope('WebhookDeliveryList'), "The task's webhook messages, oldest first, each with every attempt to deliver it."),
      ...OF_A_TASK,
    },
  },
  'POST /api/v1/tasks/{id}/webhook-deliveries/{deliveryId}/redeliver': {
    operationId: 'redeliverWebhook',
    responses: {
      '202': json(
        envelope('WebhookDelivery'),
        'A new round of attempts is recorded, due now: the delivery, pending, with its earlier attempts.',
      ),
      '409': refTo('Conflict'),
      ...OF_A_TASK,
    },
  },
  'GET /api/v1/tasks/{id}/stream': {
    operationId: 'streamTask',
    responses: {
      '200': {
        description:
          'Server-Sent Events: blocks of `event: <kind>`, `data: <TaskEvent JSON>`, `id: <event id>`; comment blocks (`: keep-alive`) carry no event.',
        content: { 'text/event-stream': { schema: ref('TaskEvent') } },
      },
      '400': refTo('BadRequest'),
      ...OF_A_TASK,
    },
  },
  'POST /api/v1/tasks/{id}/messages': {
    operationId: 'sendMessage',
    requestContent: { 'multipart/form-data': { schema: ref('FollowUpForm') } },
    responses: {
      '201': json(
        envelope('FollowUpAccepted'),
        'The message is recorded: it starts the next turn (at once when it interrupted the running one), or waits behind the running one.',
      ),
      '400': refTo('BadRequest'),
      '409': refTo('Conflict'),
      '429': refTo('RateLimited'),
      ...OF_A_TASK,
    },
  },
  'POST /api/v1/tasks/{id}/fork': {
    operationId: 'forkTask',
    responses: {
      '201': json(envelope('ForkedTask'), "The fork is created with the source's events up to afterEventId; it goes on from there."),
      '400': refTo('BadRequest'),
      '409': refTo('Conflict'),
      '429': refTo('RateLimited'),
      ...OF_A_TASK,
    },
  },
  'POST /api/v1/tasks/{id}/cancel': {
    operationId: 'cancelTask',
    responses: { '200': json(envelope('CancelledTask'), "The task's status after the cancel."), ...OF_A_TASK },
  },
  'POST /api/v1/tasks/{id}/tools/{callId}/approve': {
    operationId: 'approveToolCall',
    responses: {
      '200': json(envelope('ToolCallDecision'), 'The decision is recorded.'),
      '400': refTo('BadRequest'),
      '409': refTo('Conflict'),
      ...OF_A_TASK,
    },
  },
  'GET /api/v1/tasks/{id}/artifacts': {
    operationId: 'listArtifacts',
    responses: { '200': json(ref('ArtifactList'), 'The files the agent wrote under downloads/ (no envelope).'), ...OF_A_TASK },
  },
  'GET /api/v1/tasks/{id}/artifacts/download': {
    operationId: 'downloadArtifact',
    responses: {
      '200': {
        description: "The file's bytes; Content-Type by extension (the artifact record's mimeType).",
        headers: {
          'Content-Disposition': {
            description: 'attachment; filename="<ASCII name>"; filename*=UTF-8\'\'<the exact name, percent-encoded>',
            schema: { type: 'string' },
          },
          'Content-Length': { description: 'the size in bytes', schema: { type: 'integer', minimum: 0 } },
          'X-Content-Type-Options': {
            description: 'nosniff: a browser takes the Content-Type as sent, never guesses one from the bytes',
            schema: { type: 'string', enum: ['nosniff'] },
          },
        },
        content: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } },
      },
      '400': refTo('BadRequest'),
      ...OF_A_TASK,
    },
  },
  'GET /api/v1/tasks/{id}/files': {
    operationId: 'listWorkspaceFiles',
    responses: {
      '200': json(envelope('WorkspaceFilePage'), 'The workspace files as they were right after event `at` (default: now).'),
      '400': refTo('BadRequest'),
      ...OF_A_TASK,
    },
  },
  'GET /api/v1/tasks/{id}/files/download': {
    operationId: 'downloadWorkspaceFile',
    responses: {
      '200': {
        description: "The file's bytes as they were right after event `at` (default: now).",
        headers: {
          'Content-Disposition': {
            description: 'attachment; filename="<ASCII name>"; filename*=UTF-8\'\'<the exact name, percent-encoded>',
            schema: { type: 'string' },
          },
          'Content-Length': { description: 'the size in bytes', schema: { type: 'integer', minimum: 0 } },
          'X-Content-Type-Options': { description: 'nosniff', schema: { type: 'string', enum: ['nosniff'] } },
        },
        content: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } },
      },
      '400': refTo('BadRequest'),
      ...OF_A_TASK,
    },
  },
  'GET /healthz': {
    operationId: 'getHealth',
    // A constant answer: nothing it calls can fail, so no 500.
    responses: { '200': json(ref('Health'), 'The service accepts tasks.'), ...BEFORE_ANY_ROUTE },
  },
  'GET /readyz': {
    operationId: 'getReadiness',
    responses: {
      '200': json(ref('Readiness'), 'Every dependency of this instance answers.'),
      '503': json(ref('Readiness'), 'A dependency does not answer (within 2 s): the body names it.'),
      ...BEFORE_ANY_ROUTE,
    },
  },
  'GET /metrics': {
    operationId: 'getMetrics',
    responses: {
      '200': {
        description:
          'Prometheus text exposition format 0.0.4. No auth: keep the port off the public network, or filter /metrics at the proxy.',
        content: { 'text/plain': { schema: { type: 'string' } } },
      },
      ...BEFORE_ANY_ROUTE,
    },
  },
};
