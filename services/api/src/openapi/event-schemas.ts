// One schema per kind of event on the task stream (toPublicEvent in @app/task-domain): the `data:`
// line of an SSE block is `{type: <kind>, data: <payload>}`. test/docs/openapi-schemas.spec.ts
// checks that every kind toPublicEvent emits has its schema here.

type Schema = Record<string, unknown>;

const str: Schema = { type: 'string' };
const int: Schema = { type: 'integer', minimum: 0 };
const bool: Schema = { type: 'boolean' };
const dateTime: Schema = { type: 'string', format: 'date-time' };
const oneOf = (...values: string[]): Schema => ({ type: 'string', enum: values });
const payload = (properties: Record<string, Schema>, optional: string[] = []): Schema => ({
  type: 'object',
  properties,
  required: Object.keys(properties).filter((key) => !optional.includes(key)),
  additionalProperties: false,
});
const costUsd: Schema = {
  type: 'number',
  minimum: 0,
  nullable: true,
  description: "USD at the service's price table; null when any of the calls had no price",
};
const either = (...schemas: Schema[]): Schema => ({ oneOf: schemas });

/** One connection through the task's egress proxy: let through (no `reason`), or refused (with it). */
function egressPayload(allowed: boolean): Schema {
  return payload({
    callId: { type: 'string', description: 'the tool call whose command made the connection' },
    host: { type: 'string', description: 'as the command named it (CONNECT host, or the host of a plain http:// request)' },
    port: { type: 'integer', minimum: 0, maximum: 65535, description: '0 when the request named none' },
    allowed: { type: 'boolean', enum: [allowed] },
    ...(allowed
      ? {}
      : {
          reason: {
            type: 'string',
            description:
              'which rule or setting refused it, e.g. "refused: not in the task\'s network.allow"; never what a name resolved to',
          },
        }),
    bytesOut: { ...int, description: 'bytes from the command to the destination (for HTTPS, of the encrypted tunnel)' },
    bytesIn: { ...int, description: 'bytes from the destination back' },
    durationMs: int,
  });
}

/** The payload (`data`) of each event kind. */
export const EVENT_PAYLOADS: Record<string, Schema> = {
  message: payload(
    {
      messageId: str,
      text: str,
      queued: bool,
      maxTokens: { type: 'integer', minimum: 1 },
      maxCostUsd: { type: 'number', minimum: 0, description: 'USD, more than 0' },
    },
    ['maxTokens', 'maxCostUsd'],
  ),
  status: payload({ status: oneOf('running'), turn: int, messageId: str }),
  usage: payload({
    inputTokens: int,
    outputTokens: int,
    totalTokens: int,
    cacheReadTokens: int,
    cacheWriteTokens: int,
    costUsd: { ...costUsd, description: "USD of this call at the service's price table; null: its model has no price" },
    turn: int,
    step: int,
    model: str,
  }),
  content: payload({ text: str }),
  tool_call: payload(
    {
      callId: str,
      toolName: str,
      status: oneOf('awaiting_approval', 'approved'),
      args: { type: 'object', additionalProperties: true },
      approvedByRule: { type: 'object', additionalProperties: true, description: 'the proceed_always rule that approved it' },
    },
    ['approvedByRule'],
  ),
  tool_decision: either(
    payload(
      {
        callId: str,
        outcome: oneOf('proceed_once', 'proceed_always', 'cancel'),
        approved: bool,
        rule: { type: 'object', additionalProperties: true, description: 'the rule a proceed_always added' },
      },
      ['rule'],
    ),
    payload({ callId: str, outcome: oneOf('expired'), approved: { type: 'boolean', enum: [false] }, timeoutMs: int }),
  ),
  tool_started: payload({ callId: str, toolName: str }),
  tool_result: payload(
    {
      callId: str,
      toolName: str,
      status: oneOf('success', 'error', 'cancelled'),
      output: { type: 'string', description: 'secrets redacted' },
      exitCode: { type: 'integer', description: 'shell only' },
      durationMs: int,
      changes: {
        type: 'array',
        maxItems: 1000,
        description: 'what the call changed in the workspace (files and links), by path; absent when it changed nothing',
        items: {
          type: 'object',
          additionalProperties: false,
          required: ['path', 'change', 'size'],
          properties: { path: str, change: oneOf('created', 'modified', 'deleted'), size: int },
        },
      },
      changesTruncated: {
        type: 'boolean',
        enum: [true],
        description: 'more changed than `changes` lists (1,000 paths or 256 KiB of them)',
      },
      checkpointSkipped: { type: 'string', description: 'why the workspace could not be checkpointed after the call; the task went on' },
    },
    ['exitCode', 'changes', 'changesTruncated', 'checkpointSkipped'],
  ),
  artifact: either(
    payload({
      path: str,
      name: str,
      size: int,
      sha256: str,
      category: str,
      mimeType: str,
      modifiedAt: dateTime,
      callId: str,
      status: oneOf('recorded'),
    }),
    payload({ path: str, callId: str, status: oneOf('removed') }),
  ),
  artifact_links: payload({ callId: str, links: { type: 'array', items: str } }),
  sandbox: either(
    payload({ status: oneOf('expired'), sizeBytes: int, idleMs: int, skipped: { type: 'array', items: str } }, ['skipped']),
    payload({ status: oneOf('restored'), durationMs: int }),
    payload({
      status: oneOf('snapshot_failed'),
      reason: { type: 'string', description: "the last attempt's error, secrets masked" },
      attempts: { type: 'integer', minimum: 1 },
      kept: { ...oneOf('workspace'), description: 'what the task still has: the live workspace, neither archived nor removed' },
    }),
  ),
  notice: either(
    payload({ code: oneOf('SECRETS_UNAVAILABLE'), names: { type: 'array', items: str }, message: str }),
    payload({ code: oneOf('MCP_SERVER_UNAVAILABLE'), server: str, message: str }),
  ),
  egress: either(egressPayload(true), egressPayload(false)),
  forked: payload({
    taskId: { type: 'string', description: 'the task this one was forked from' },
    eventId: {
      type: 'integer',
      minimum: 1,
      description: "the source's event the fork was taken after; the events before this one are its copy",
    },
  }),
  rolled_back: payload({
    fromEventId: { type: 'integer', minimum: 1, description: "the interrupted turn's first event (its `status`)" },
    toEventId: {
      type: 'integer',
      minimum: 1,
      description: "its last (its `done`): the events in between stay in the history, out of the model's context",
    },
  }),
  done: payload(
    {
      status: oneOf('completed', 'failed', 'cancelled'),
      error: str,
      turn: int,
      usage: {
        ...payload({ inputTokens: int, outputTokens: int, totalTokens: int, cacheReadTokens: int, cacheWriteTokens: int, costUsd }),
        description: "the turn's model calls summed (absent on turns that ended before it was recorded)",
      },
      reason: {
        ...oneOf('interrupted'),
        description: 'on a cancelled turn stopped by a follow-up sent with ifRunning interrupt or rollback',
      },
    },
    ['error', 'usage', 'reason'],
  ),
};

const schemaName = (kind: string): string => `${kind.replace(/(^|_)([a-z])/g, (_m, _s, c: string) => c.toUpperCase())}Event`;

/**
 * `{type, data}` per kind, named e.g. ToolCallEvent, plus TaskEvent: oneOf them, told apart by `type`;
 * and `{id, type, data, at}` per kind (ToolCallEventRecord) with TaskEventRecord, oneOf those.
 */
export function eventSchemas(): Record<string, Schema> {
  const perKind = Object.fromEntries(
    Object.entries(EVENT_PAYLOADS).map(([kind, data]) => [
      schemaName(kind),
      { type: 'object', properties: { type: oneOf(kind), data }, required: ['type', 'data'], additionalProperties: false },
    ]),
  );
  // The same event as the history lists it (GET /tasks/{id}/events): with its id and recorded time.
  const perKindRecord = Object.fromEntries(
    Object.entries(EVENT_PAYLOADS).map(([kind, data]) => [
      recordName(kind),
      {
        type: 'object',
        properties: {
          id: { type: 'integer', minimum: 1, description: 'the event id, as on the stream' },
          type: oneOf(kind),
          data,
          at: { ...dateTime, description: 'when the service recorded the event' },
        },
        required: ['id', 'type', 'data', 'at'],
        additionalProperties: false,
      },
    ]),
  );
  return {
    ...perKind,
    TaskEvent: {
      description:
        "The JSON of one SSE block's `data:` line; the block's `event:` is the same kind and its `id:` the event id (1, 2, 3, …).",
      ...unionOf(schemaName),
    },
    ...perKindRecord,
    TaskEventRecord: {
      description: 'An event of the task as the stream sends it (`type`, `data`), with its `id` and the time it was recorded (`at`).',
      ...unionOf(recordName),
    },
  };
}

const recordName = (kind: string): string => schemaName(kind).replace(/Event$/, 'EventRecord');

/** oneOf the per-kind schemas named by `nameOf`, told apart by `type`. */
const unionOf = (nameOf: (kind: string) => string): Schema => {
  const kinds = Object.keys(EVENT_PAYLOADS);
  return {
    oneOf: kinds.map((kind) => ({ $ref: `#/components/schemas/${nameOf(kind)}` })),
    discriminator: {
      propertyName: 'type',
      mapping: Object.fromEntries(kinds.map((kind) => [kind, `#/components/schemas/${nameOf(kind)}`])),
    },
  };
};
