import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TaskEvent, TaskView } from '@app/task-domain';
import { TASK_EVENT_SCHEMA_VERSIONS, projectTaskView, toPublicEvent } from '@app/task-domain';
import { ok } from '../../services/api/src/http/envelope';
import { EVENT_PAYLOADS, eventSchemas } from '../../services/api/src/openapi/event-schemas';
import { SCHEMAS, envelope } from '../../services/api/src/openapi/schemas';
import { presentTask } from '../../services/api/src/tasks/task.presenter';
import { presentSchedule } from '../../services/api/src/schedules/schedule.presenter';
import { scheduleRuns } from '../../services/api/src/schedules/schedule-runs';
import type { ScheduleEvent } from '@app/task-domain';
import { evolveSchedule, initialScheduleState } from '@app/task-domain';

// The hand-written response and event schemas of the OpenAPI document, checked against what the
// code returns: presentTask over a projected task, toPublicEvent over every kind of stored event,
// and the examples docs/api.md shows.

const TASK_ID = 'task_0123456789abcdef0123456789abcdef';
const AT = '2026-11-25T19:08:44.271Z';

/** A validator of `{$ref: '#/components/schemas/<name>'}` over the document's component schemas. */
function validatorOf(schema: Record<string, unknown>) {
  const schemas = { ...SCHEMAS, ...eventSchemas() };
  // ajv reads OpenAPI's `nullable`; the discriminator only restates the oneOf, so it is left out.
  const { discriminator: _restated, ...taskEvent } = schemas.TaskEvent as Record<string, unknown>;
  const ajv = new Ajv({ allErrors: true, strict: false });
  addFormats(ajv);
  ajv.addSchema({ components: { schemas: { ...schemas, TaskEvent: taskEvent } } }, 'doc');
  return ajv.compile({ ...JSON.parse(JSON.stringify(schema).replaceAll('"#/components', '"doc#/components')) });
}

function expectValid(schema: Record<string, unknown>, value: unknown): void {
  const validate = validatorOf(schema);
  validate(value);
  expect(validate.errors ?? []).toEqual([]);
}

const isValid = (schema: Record<string, unknown>, value: unknown): boolean => validatorOf(schema)(value) === true;

const created = {
  type: 'TaskCreated',
  data: {
    taskId: TASK_ID,
    tenantId: 't1',
    messageId: 'msg_1',
    text: 'Write a report',
    autoExecute: false,
    showInHistory: true,
    env: { REGION: 'eu' },
    secretNames: ['TOKEN'],
    files: [{ name: 'data.csv', size: 12 }],
    maxTokens: 1000,
    network: { allow: ['pypi.org', '*.pythonhosted.org:443'] },
  },
};

/** One stored event of every type, with its optional fields set. */
const EVERY_EVENT: Record<string, unknown>[] = [
  created,
  { type: 'UserMessageAdded', data: { messageId: 'msg_2', text: 'And a chart', queued: true, maxTokens: 5000 } },
  { type: 'TurnStarted', data: { turn: 1, messageId: 'msg_1' } },
  {
    type: 'ModelResponded',
    data: { turn: 1, step: 1, model: 'm', finishReason: 'stop', usage: { inputTokens: 3, outputTokens: 2, totalTokens: 5 } },
  },
  { type: 'AssistantTextProduced', data: { turn: 1, step: 1, text: 'Working on it.' } },
  {
    type: 'ToolCallRequested',
    data: {
      turn: 1,
      step: 1,
      callId: 'call_1',
      toolName: 'shell',
      args: { command: 'ls' },
      status: 'approved',
      approvedByRule: { toolName: 'shell' },
    },
  },
  { type: 'ToolCallDecided', data: { callId: 'call_1', outcome: 'proceed_always', approved: true, rule: { toolName: 'shell' } } },
  { type: 'ToolCallApprovalExpired', data: { callId: 'call_2', toolName: 'shell', timeoutMs: 60000 } },
  { type: 'ToolCallStarted', data: { callId: 'call_1', toolName: 'shell' } },
  { type: 'ToolCallFinished', data: { callId: 'call_1', toolName: 'shell', status: 'success', output: 'ok', exitCode: 0, durationMs: 12 } },
  {
    type: 'ArtifactRecorded',
    data: {
      path: 'downloads/r.md',
      name: 'r.md',
      size: 9,
      sha256: 'ab',
      category: 'markdown',
      mimeType: 'text/markdown',
      modifiedAt: AT,
      objectKey: 'internal/key',
      callId: 'call_1',
    },
  },
  { type: 'ArtifactRemoved', data: { path: 'downloads/r.md', callId: 'call_1' } },
  { type: 'ArtifactLinksChanged', data: { callId: 'call_1', links: ['downloads/out'] } },
  {
    type: 'EgressRecorded',
    data: {
      callId: 'call_1',
      host: 'pypi.org',
      port: 443,
      allowed: false,
      reason: 'refused: not in SANDBOX_EGRESS_ALLOW',
      bytesOut: 0,
      bytesIn: 0,
      durationMs: 3,
    },
  },
  { type: 'SandboxExpired', data: { snapshotKey: 'k', sizeBytes: 10, idleMs: 900000, skipped: ['fifo'] } },
  { type: 'SandboxRestored', data: { snapshotKey: 'k', durationMs: 40 } },
  {
    type: 'SandboxSnapshotFailed',
    data: { reason: 'snapshot exceeds 10 bytes (SANDBOX_SNAPSHOT_MAX_BYTES)', attempts: 4, kept: 'workspace' },
  },
  { type: 'SecretsUnavailable', data: { names: ['TOKEN'], reason: 'the key changed' } },
  { type: 'McpServerUnavailable', data: { server: 'docs', reason: 'refused' } },
  { type: 'TurnCompleted', data: { turn: 1 } },
  { type: 'TaskFailed', data: { turn: 1, error: 'Token budget reached' } },
  { type: 'TaskCancelled', data: { turn: 1, droppedMessageIds: [] } },
  { type: 'TaskForked', data: { taskId: 'task_source', eventId: 7, autoExecute: false } },
  { type: 'TurnResumed', data: { turn: 1, messageId: 'msg_1' } },
  { type: 'TaskCancelled', data: { turn: 2, droppedMessageIds: [], reason: 'interrupted' } },
  { type: 'TurnRolledBack', data: { turn: 2, fromEventId: 9, toEventId: 14, artifacts: [] } },
];

const sseExamples = (): unknown[] =>
  [...readFileSync(join(__dirname, '..', '..', 'docs', 'api.md'), 'utf8').matchAll(/^data: (\{.*\})$/gm)].map((m) => JSON.parse(m[1]));

describe('the OpenAPI schemas', () => {
  it('have a payload schema for every kind of event the public stream carries, and no other', () => {
    const kinds = Object.keys(TASK_EVENT_SCHEMA_VERSIONS).map((type) => toPublicEvent({ type, data: {} } as unknown as TaskEvent).kind);
    expect(Object.keys(EVENT_PAYLOADS).sort()).toEqual([...new Set(kinds)].sort());
    expect([...new Set(EVERY_EVENT.map((e) => e.type))].sort()).toEqual(Object.keys(TASK_EVENT_SCHEMA_VERSIONS).sort());
  });

  it.each(EVERY_EVENT.map((event) => [event.type, event] as const))('describe the public event of %s', (_type, event) => {
    const { kind, data } = toPublicEvent(event as unknown as TaskEvent);
    expectValid({ $ref: '#/components/schemas/TaskEvent' }, { type: kind, data });
  });

  it('describe an egress event as let through without a reason, or refused with one', () => {
    const event = { $ref: '#/components/schemas/TaskEvent' };
    const through = { callId: 'call_1', host: 'pypi.org', port: 443, allowed: true, bytesOut: 12_300, bytesIn: 1_200_000, durationMs: 340 };
    const refused = {
      ...through,
      host: '169.254.169.254',
      port: 80,
      allowed: false,
      reason: 'refused: not a public address',
      bytesOut: 0,
      bytesIn: 0,
    };
    expectValid(event, { type: 'egress', data: through });
    expectValid(event, { type: 'egress', data: refused });
    const { reason: _left, ...refusedWithoutReason } = refused;
    expect(isValid(event, { type: 'egress', data: refusedWithoutReason })).toBe(false);
    expect(isValid(event, { type: 'egress', data: { ...through, reason: 'refused: no' } })).toBe(false);
  });

  it("describe every event of docs/api.md's stream examples", () => {
    const examples = sseExamples();
    expect(examples.length).toBeGreaterThan(5);
    for (const example of examples) expectValid({ $ref: '#/components/schemas/TaskEvent' }, example);
  });

  it('describe the Task answer, in its envelope, as presentTask builds it', () => {
    let view: TaskView | undefined;
    const run = [
      created,
      EVERY_EVENT[2],
      EVERY_EVENT[3],
      { ...EVERY_EVENT[5], data: { ...EVERY_EVENT[5].data!, status: 'awaiting_approval' } },
    ];
    run.forEach((event, i) => (view = projectTaskView(view, { event: event as unknown as TaskEvent, revision: i + 1, recordedAt: AT })));
    expectValid(envelope('Task'), ok(presentTask(view!)));
    const turnFailed = EVERY_EVENT.find((e) => e.type === 'TaskFailed') as unknown as TaskEvent;
    const failed = projectTaskView(view, { event: turnFailed, revision: 9, recordedAt: AT });
    expectValid(envelope('Task'), ok(presentTask(failed!)));
    expectValid(envelope('TaskPage'), ok({ tasks: [presentTask(failed!)], nextCursor: null }));
    const forked = EVERY_EVENT.find((e) => e.type === 'TaskForked') as unknown as TaskEvent;
    const fork = projectTaskView(failed, { event: forked, revision: 10, recordedAt: AT });
    expect(presentTask(fork!).forkedFrom).toEqual({ taskId: 'task_source', eventId: 7 });
    expectValid(envelope('Task'), ok(presentTask(fork!)));
  });

  it('describe the Schedule answers as presentSchedule and the runs list build them', () => {
    const history: ScheduleEvent[] = [
      {
        type: 'ScheduleCreated',
        data: {
          scheduleId: 'sched_0123456789abcdef0123456789abcdef',
          tenantId: 't',
          cron: '0 9 * * MON-FRI',
          timezone: 'Europe/Paris',
          task: {
            message: 'report',
            autoExecute: true,
            showInHistory: true,
            env: { REGION: 'eu' },
            secretNames: ['TOKEN'],
            maxTokens: 1000,
          },
          overlap: 'skip',
          paused: false,
          at: AT,
        },
      },
      { type: 'ScheduleFired', data: { dueAt: '2026-11-26T08:00:00.000Z', firedAt: '2026-11-26T08:00:00.004Z', taskId: TASK_ID } },
      { type: 'ScheduleSkipped', data: { dueAt: '2026-11-27T08:00:00.000Z', at: AT, reason: 'the previous run is still running' } },
      { type: 'ScheduleFired', data: { dueAt: '2026-11-30T08:00:00.000Z', firedAt: '2026-11-30T08:00:00.010Z', taskId: TASK_ID } },
      { type: 'ScheduleRunFailed', data: { dueAt: '2026-11-30T08:00:00.000Z', at: AT, reason: 'webhookUrl is refused' } },
    ];
    const state = history.reduce(evolveSchedule, initialScheduleState());
    expectValid(envelope('Schedule'), ok(presentSchedule(state)));
    expectValid(envelope('Schedule'), ok(presentSchedule(evolveSchedule(state, { type: 'SchedulePaused', data: { at: AT } }))));
    expectValid(envelope('SchedulePage'), ok({ schedules: [presentSchedule(state)], nextCursor: '3' }));
    const stored = history.map((e, i) => ({
      ...e,
      streamId: 's',
      revision: i + 1,
      globalPosition: i + 1,
      recordedAt: AT,
      schemaVersion: 1,
    }));
    const runs = scheduleRuns(stored).map(({ revision: _cursor, ...run }) => run);
    expect(runs.map((r) => r.outcome)).toEqual(['started', 'skipped', 'failed']);
    expectValid(envelope('ScheduleRunPage'), ok({ runs, nextCursor: null }));
    expectValid(envelope('DeletedSchedule'), ok({ id: state.id, deleted: true }));
  });
});
