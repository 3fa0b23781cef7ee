import { ResponseObject } from '@nestjs/swagger';
import { envelope, ref } from './schemas';

// What each operation answers, by "METHOD path": its method-like id and every status it can return
// (docs/api.md "Endpoints" and "Errors"). The controllers' decorators give the paths, parameters
// and request bodies; this table is the one place for the answers.

type Schema = Record<string, unknown>;
type Responses = Record<string, Schema>;

const json = (schema: Schema, description: string): Schema => ({ description, content: { 'application/json': { schema } } });

const error = (code: string, description: string, message: string, extra: Schema = {}): ResponseObject => ({
  description: `${code}: ${description}`,
  ...extra,
  content: {
    'application/json': { schema: ref('ErrorEnvelope'), example: { success: false, error: { code, message } } },
  },
});

const RETRY_AFTER = {
  'Retry-After': { description: 'Whole seconds until one more request fits.', schema: { type: 'integer', minimum: 1 } },
};

/** Error answers by status, shared by the operations (components.responses). */
export const ERROR_RESPONSES: Record<string, ResponseObject> = {
  BadRequest: error('VALIDATION_ERROR', 'a request value is invalid; the message names the field', 'message must be a non-empty string'),
  Unauthorized: error(
    'AUTH_REQUIRED',
    'no `Authorization: Bearer <key>` header; INVALID_API_KEY: a key the service does not know',
    'Authorization: Bearer <API key> is required',
  ),
  NotFound: error('NOT_FOUND', "unknown task (or another tenant's), tool call or artifact", 'task not found'),
  Conflict: error(
    'CONFLICT',
    'the tool call is no longer awaiting approval (decided, expired, task cancelled)',
    'call is not awaiting approval',
  ),
  PayloadTooLarge: error('PAYLOAD_TOO_LARGE', 'a body, a file count or an archive over its limits', 'request body too large'),
  RateLimited: error(
    'RATE_LIMITED',
    'more creates and follow-ups than RATE_LIMIT_PER_MINUTE for the tenant',
    'Rate limit reached; retry in 60 s',
    {
      headers: RETRY_AFTER,
    },
  ),
  HeadersTooLarge: error('PAYLOAD_TOO_LARGE', 'request headers over 16 KiB; the connection is closed', 'request headers too large'),
  Internal: error('INTERNAL', 'an unexpected failure; the message is generic', 'Internal error'),
};

const refTo = (name: string): Schema => ({ $ref: `#/components/responses/${name}` });
const ALWAYS: Responses = { '431': refTo('HeadersTooLarge'), '500': refTo('Internal') };
const AUTHENTICATED: Responses = { ...ALWAYS, '401': refTo('Unauthorized') };
const OF_A_TASK: Responses = { ...AUTHENTICATED, '404': refTo('NotFound') };

export interface OperationAnswers {
  readonly operationId: string;
  readonly responses: Responses;
  /** Request body content types whose schema no DTO gives (multipart's text-encoded fields). */
  readonly requestContent?: Record<string, Schema>;
}

export const OPERATIONS: Record<string, OperationAnswers> = {
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
    responses: {
      '201': json(envelope('FollowUpAccepted'), 'The message is recorded: it starts the next turn, or waits behind the running one.'),
      '400': refTo('BadRequest'),
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
        },
        content: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } },
      },
      '400': refTo('BadRequest'),
      ...OF_A_TASK,
    },
  },
  'GET /healthz': {
    operationId: 'getHealth',
    responses: { '200': json(ref('Health'), 'The service accepts tasks.'), ...ALWAYS },
  },
};
