// The response and event schemas of the OpenAPI document, written by hand because the answers are
// plain objects built by functions (presentTask, toPublicEvent, ok), not decorated classes.
// test/docs/openapi-schemas.spec.ts checks them against what those functions return.

type Schema = Record<string, unknown>;

export const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });

const string = (description?: string): Schema => ({ type: 'string', ...(description ? { description } : {}) });
const integer = (description?: string): Schema => ({ type: 'integer', minimum: 0, ...(description ? { description } : {}) });
const dateTime: Schema = { type: 'string', format: 'date-time' };
const strings: Schema = { type: 'array', items: { type: 'string' } };
const anyObject: Schema = { type: 'object', additionalProperties: true };
const object = (properties: Record<string, Schema>, required: string[] = Object.keys(properties)): Schema => ({
  type: 'object',
  properties,
  required,
  additionalProperties: false,
});

const TASK_STATUSES = ['pending', 'running', 'awaiting_approval', 'completed', 'failed', 'cancelled'];
const OUTCOMES = ['proceed_once', 'proceed_always', 'cancel'];

/** The error envelope, `{success: false, error: {code, message}}`, with one of these codes (each error answer lists its own). */
export const errorEnvelope = (codes: readonly string[]): Schema =>
  object({
    success: { type: 'boolean', enum: [false] },
    error: object({
      code: { type: 'string', enum: codes },
      message: string('which field or rule failed; never a stack trace, a secret or internal details'),
    }),
  });

/** `{success: true, data}` around a component schema. */
export const envelope = (name: string): Schema => object({ success: { type: 'boolean', enum: [true] }, data: ref(name) });

/** Where a fork was taken: the source task and its event (Task.forkedFrom, the fork's answer). */
const FORK_ORIGIN = object({
  taskId: string('the source task'),
  eventId: { type: 'integer', minimum: 1, description: "the source's event (its id on the stream) the fork was taken after" },
});

const TaskSchemas: Record<string, Schema> = {
  TokenUsage: object({
    inputTokens: integer('every input token, those read from and written to the prompt cache included'),
    outputTokens: integer(),
    totalTokens: integer('inputTokens + outputTokens'),
    cacheReadTokens: integer('input tokens read from the provider prompt cache (0 when it reports none)'),
    cacheWriteTokens: integer('input tokens written to the provider prompt cache (0 when it reports none)'),
    costUsd: {
      type: 'number',
      minimum: 0,
      nullable: true,
      description: "USD at the service's price table (list prices, MODEL_PRICES); null when any of the calls had no price",
    },
  }),
  TaskMessage: object({
    id: string('msg_…'),
    text: string(),
    createdAt: dateTime,
    eventId: integer('SSE id of the event that carried the message'),
  }),
  PendingApproval: object({ callId: string('call_…'), toolName: string(), args: anyObject, requestedAt: dateTime }),
  UploadedFile: object({ name: string(), size: integer('bytes') }),
  Task: object(
    {
      id: string('task_ + 32 hex digits'),
      status: { type: 'string', enum: TASK_STATUSES },
      createdAt: dateTime,
      updatedAt: dateTime,
      autoExecute: { type: 'boolean' },
      showInHistory: { type: 'boolean' },
      messages: { type: 'array', items: ref('TaskMessage') },
      pendingApprovals: { type: 'array', items: ref('PendingApproval') },
      error: string('present while the latest turn has failed: why'),
      usage: ref('TokenUsage'),
      maxTokens: { type: 'integer', minimum: 1, nullable: true, description: 'the token budget in force; null: unlimited' },
      maxCostUsd: {
        type: 'number',
        minimum: 0,
        nullable: true,
        description: 'the cost budget in force, USD (more than 0); null: unlimited',
      },
      webhookUrl: {
        type: 'string',
        nullable: true,
        description:
          "where the task's webhooks go, as the create field gave it; null: none was given (the task's webhooks go to the " +
          "service's default WEBHOOK_URL when one is configured, which is never shown, or nowhere)",
      },
      network: {
        type: 'object',
        nullable: true,
        description: 'the create field `network` as given; null: none was given, so SANDBOX_EGRESS_ALLOW applies',
        properties: { allow: { ...strings, description: 'host patterns: `*`, `name` or `*.name`, each with an optional `:port`' } },
        required: ['allow'],
        additionalProperties: false,
      },
      envKeys: strings,
      files: { type: 'array', items: ref('UploadedFile') },
      secretNames: strings,
      notices: strings,
      sandbox: { type: 'string', enum: ['active', 'expired'] },
      turn: integer('number of the latest turn (0 until the first starts)'),
      lastEventId: integer("id of the task's latest SSE event"),
      // Inline rather than a $ref to ForkOrigin: OpenAPI 3.0 ignores `nullable` beside a $ref.
      forkedFrom: {
        ...FORK_ORIGIN,
        nullable: true,
        description: 'where the task was forked from (POST /tasks/{id}/fork); null: it was created, not forked',
      },
      scheduleId: {
        type: 'string',
        nullable: true,
        description: 'the schedule that started the task (POST /schedules); null: a caller created it',
      },
    },
    [
      'id',
      'status',
      'createdAt',
      'updatedAt',
      'autoExecute',
      'showInHistory',
      'messages',
      'pendingApprovals',
      'usage',
      'maxTokens',
      'maxCostUsd',
      'webhookUrl',
      'network',
      'envKeys',
      'files',
      'secretNames',
      'notices',
      'sandbox',
      'turn',
      'lastEventId',
      'forkedFrom',
      'scheduleId',
    ],
  ),
  ForkOrigin: FORK_ORIGIN,
  TaskPage: object({
    tasks: { type: 'array', items: ref('Task') },
    nextCursor: { type: 'string', nullable: true, description: 'the cursor of the next page; null on the last page' },
  }),
  CreatedTask: object({ id: string(), status: { type: 'string', enum: ['pending'] } }),
  FollowUpAccepted: object({
    id: string('the task id'),
    messageId: string('msg_…'),
    status: {
      type: 'string',
      enum: TASK_STATUSES,
      description:
        "the task's status right after the message was recorded: `running`, `pending` (waiting for a running slot), or the current one when queued",
    },
  }),
  ForkedTask: object({
    id: string('the new task: task_ + 32 hex digits'),
    status: {
      type: 'string',
      enum: TASK_STATUSES,
      description: "the fork's status: the source's at afterEventId, or `running`/`pending` when a message starts a turn",
    },
    forkedFrom: ref('ForkOrigin'),
  }),
  CancelledTask: object({ id: string(), status: { type: 'string', enum: TASK_STATUSES } }),
  ToolCallDecision: object({
    callId: string(),
    outcome: { type: 'string', enum: OUTCOMES },
    approved: { type: 'boolean', description: 'false only for cancel' },
  }),
  ArtifactFile: object({
    name: string('the bare file name'),
    path: string('workspace-relative, under downloads/'),
    size: integer('bytes'),
    category: { type: 'string', enum: ['text', 'markdown', 'json', 'csv', 'html', 'pdf', 'image', 'archive', 'code', 'other'] },
    mimeType: string(),
    modifiedAt: dateTime,
  }),
  WebhookAttempt: object(
    {
      at: { ...dateTime, description: 'when the attempt began; also its webhook-timestamp' },
      statusCode: { type: 'integer', description: "the receiver's answer, when it answered" },
      error: string('why the attempt did not deliver the message; absent when it did'),
      durationMs: integer(),
    },
    ['at', 'durationMs'],
  ),
  WebhookDelivery: object(
    {
      id: string('the webhook-id, the same on every attempt'),
      type: { type: 'string', enum: ['task.awaiting_approval', 'task.completed', 'task.failed', 'task.cancelled'] },
      status: { type: 'string', enum: ['pending', 'delivered', 'failed'] },
      attempts: { type: 'array', items: ref('WebhookAttempt') },
      nextAttemptAt: { ...dateTime, description: 'when the next attempt is due, while pending after a failed attempt' },
    },
    ['id', 'type', 'status', 'attempts'],
  ),
  WebhookDeliveryList: object({ deliveries: { type: 'array', items: ref('WebhookDelivery') } }),
  TaskEventPage: object(
    {
      events: { type: 'array', items: ref('TaskEventRecord'), description: 'oldest first' },
      nextAfter: integer('present when more events follow: the `after` of the next page'),
    },
    ['events'],
  ),
  ArtifactList: object({ files: { type: 'array', items: ref('ArtifactFile') } }),
  WorkspaceFile: object({ path: string('workspace-relative, `/`-separated'), size: integer('bytes'), sha256: string('hex') }),
  WorkspaceFilePage: object(
    {
      at: integer('the event id the listing is as of (the last event when `at` was not given)'),
      files: { type: 'array', items: ref('WorkspaceFile'), description: 'folder by folder, names in byte order' },
      nextCursor: { type: 'string', nullable: true, description: 'the `cursor` of the next page; null on the last' },
    },
    ['at', 'files', 'nextCursor'],
  ),
  Health: object({ status: { type: 'string', enum: ['ok'] } }),
  Readiness: object({
    status: { type: 'string', enum: ['ready', 'unavailable'] },
    dependencies: {
      type: 'object',
      description: 'Each dependency this instance uses (eventStore, bus, objectStore, temporal: whichever it has), up or down.',
      additionalProperties: { type: 'string', enum: ['up', 'down'] },
    },
  }),
  FollowUpForm: object(
    {
      message: string('the follow-up message'),
      maxTokens: { type: 'string', pattern: '^[0-9]+$', description: 'the token budget from now on, in digits' },
      ifRunning: { type: 'string', enum: ['enqueue', 'reject', 'interrupt', 'rollback'], default: 'enqueue' },
    },
    ['message'],
  ),
  CreateTaskForm: object(
    {
      message: string('the instruction for the agent'),
      autoExecute: { type: 'string', enum: ['true', 'false'], default: 'true' },
      showInHistory: { type: 'string', enum: ['true', 'false'], default: 'true' },
      maxTokens: { type: 'string', pattern: '^[0-9]+$', description: 'the token budget, in digits' },
      maxCostUsd: { type: 'string', pattern: '^[0-9]+(\\.[0-9]+)?$', description: 'the cost budget in USD, a decimal in digits' },
      secrets: string('JSON-encoded object, string to string (as in the JSON body)'),
      env: string('JSON-encoded object, string to string (as in the JSON body)'),
      mcpServers: string('JSON-encoded object (as in the JSON body)'),
      webhookUrl: string('an http(s) URL (as in the JSON body)'),
      network: string('JSON-encoded object, `{"allow": [host pattern, …]}` (as in the JSON body)'),
      files: {
        type: 'array',
        items: { type: 'string', format: 'binary' },
        description: 'repeatable; a .zip is extracted into the workspace',
      },
    },
    ['message'],
  ),
};

const nullable = (schema: Schema, description: string): Schema => ({ ...schema, nullable: true, description });

const ScheduleSchemas: Record<string, Schema> = {
  Schedule: object({
    id: string('sched_…'),
    cron: string('5 fields, or 6 with seconds first'),
    timezone: string('IANA time zone'),
    task: object({
      message: string(),
      autoExecute: { type: 'boolean' },
      showInHistory: { type: 'boolean' },
      maxTokens: nullable({ type: 'integer', minimum: 1 }, 'the budget of each task; null: the service default'),
      maxCostUsd: nullable({ type: 'number', minimum: 0 }, 'the cost budget of each task, USD (more than 0); null: the service default'),
      webhookUrl: nullable({ type: 'string' }, 'as given; null: none'),
      envKeys: { ...strings, description: 'the keys of env (never the values)' },
      secretNames: { ...strings, description: 'the names of the secrets (never the values)' },
    }),
    target: nullable({ type: 'string' }, 'the task each run follows up; null: each run creates a task'),
    overlap: { type: 'string', enum: ['skip', 'enqueue'] },
    paused: { type: 'boolean' },
    nextRunAt: nullable(dateTime, 'the next due time; null while paused'),
    lastRunAt: nullable(dateTime, 'when the last run was recorded; null: none yet'),
    createdAt: dateTime,
    updatedAt: dateTime,
  }),
  SchedulePage: object({
    schedules: { type: 'array', items: ref('Schedule') },
    nextCursor: nullable({ type: 'string' }, 'pass as cursor for the next page; null on the last'),
  }),
  DeletedSchedule: object({ id: string(), deleted: { type: 'boolean', enum: [true] } }),
  ScheduleRun: object(
    {
      dueAt: dateTime,
      firedAt: dateTime,
      taskId: string('the task created, or the target followed up'),
      outcome: { type: 'string', enum: ['started', 'skipped', 'failed'] },
      reason: string('why it was skipped or failed'),
    },
    ['dueAt', 'outcome'],
  ),
  ScheduleRunPage: object({
    runs: { type: 'array', items: ref('ScheduleRun') },
    nextCursor: nullable({ type: 'string' }, 'pass as cursor for the next page; null on the last'),
  }),
};

export const SCHEMAS: Record<string, Schema> = { ...TaskSchemas, ...ScheduleSchemas };
