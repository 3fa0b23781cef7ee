import { UnreadableTaskEventError } from './task.errors';
import type { TaskEventData, TaskEventType } from './task.events';
import { TASK_EVENT_SCHEMA_VERSIONS } from './task.events';
import type { RecordedEvent } from './task-event.decoder';
import { toTaskEvent } from './task-event.decoder';

const usage = { inputTokens: 1, outputTokens: 2, totalTokens: 3 };
const artifact = {
  path: 'downloads/a.txt',
  name: 'a.txt',
  size: 1,
  sha256: 'ab',
  category: 'text',
  mimeType: 'text/plain',
  modifiedAt: '2026-01-01T00:00:00.000Z',
  objectKey: 'k',
};

/** One event of every type: a new type fails to compile until it has one here. */
const SAMPLES: { readonly [T in TaskEventType]: TaskEventData<T> } = {
  TaskCreated: {
    taskId: 't',
    tenantId: 'ten',
    messageId: 'm1',
    text: 'hi',
    autoExecute: true,
    showInHistory: true,
    env: { A: '1' },
    secretNames: [],
    files: [],
  },
  UserMessageAdded: { messageId: 'm2', text: 'more', queued: true, maxTokens: 5 },
  TurnStarted: { turn: 1, messageId: 'm1' },
  ModelResponded: { turn: 1, step: 1, model: 'x', finishReason: 'stop', usage },
  AssistantTextProduced: { turn: 1, step: 1, text: 'hello' },
  ToolCallRequested: { turn: 1, step: 1, callId: 'c1', toolName: 'shell', args: { command: 'ls' }, status: 'awaiting_approval' },
  ToolCallDecided: { callId: 'c1', outcome: 'proceed_always', approved: true, rule: { toolName: 'shell', programs: ['ls'] } },
  ToolCallApprovalExpired: { callId: 'c1', toolName: 'shell', timeoutMs: 10 },
  ToolCallStarted: { callId: 'c1', toolName: 'shell' },
  ToolCallFinished: { callId: 'c1', toolName: 'shell', status: 'success', output: 'ok', exitCode: 0, durationMs: 3 },
  TurnCompleted: { turn: 1 },
  TaskFailed: { turn: 1, error: 'boom' },
  TaskCancelled: { turn: 1, droppedMessageIds: ['m2'] },
  ArtifactRecorded: { ...artifact, callId: 'c1' },
  ArtifactRemoved: { path: 'downloads/a.txt', callId: 'c2' },
  SandboxExpired: { snapshotKey: 'snap/1', sizeBytes: 10, idleMs: 20 },
  SandboxRestored: { snapshotKey: 'snap/1', durationMs: 5 },
  SandboxSnapshotFailed: { reason: 'snapshot exceeds 10 bytes (SANDBOX_SNAPSHOT_MAX_BYTES)', attempts: 4, kept: 'workspace' },
  SecretsUnavailable: { names: ['TOKEN'], reason: 'no key' },
  McpServerUnavailable: { server: 'docs', reason: 'refused' },
  TaskForked: { taskId: 'source', eventId: 7, autoExecute: false, resumes: { turn: 1, messageId: 'm1' } },
  TurnResumed: { turn: 1, messageId: 'm1' },
  TurnRolledBack: { turn: 2, fromEventId: 9, toEventId: 14, artifacts: [artifact] },
  ArtifactLinksChanged: { callId: 'c1', links: ['downloads/out'] },
  EgressRecorded: { callId: 'c1', host: 'pypi.org', port: 443, allowed: true, bytesOut: 512, bytesIn: 4096, durationMs: 80 },
};

const stored = (type: string, data: unknown, schemaVersion = 1): RecordedEvent => ({
  streamId: 'task-t',
  revision: 7,
  type,
  schemaVersion,
  data,
});

const refusal = (event: RecordedEvent): unknown => {
  try {
    toTaskEvent(event);
  } catch (error) {
    return error;
  }
  throw new Error('the decoder accepted it');
};

describe('toTaskEvent', () => {
  const types = Object.keys(SAMPLES) as TaskEventType[];

  it('has a sample of every type the code writes', () => expect(types.sort()).toEqual(Object.keys(TASK_EVENT_SCHEMA_VERSIONS).sort()));

  it.each(types)('reads %s back as it was written, through JSON', (type) => {
    const data = JSON.parse(JSON.stringify(SAMPLES[type])) as unknown;
    expect(toTaskEvent(stored(type, data, TASK_EVENT_SCHEMA_VERSIONS[type]))).toEqual({ type, data: SAMPLES[type] });
  });

  it('refuses a type it does not know, naming the stream, revision and type', () => {
    const error = refusal(stored('TaskArchived', {}));
    expect(error).toBeInstanceOf(UnreadableTaskEventError);
    expect(error).toMatchObject({ code: 'TASK.UNREADABLE_EVENT', streamId: 'task-t', revision: 7, type: 'TaskArchived' });
    expect((error as Error).message).toBe('event 7 (TaskArchived) of stream task-t: not a task event type this code knows');
  });

  it('refuses names inherited from Object, which are no event types', () => {
    expect(refusal(stored('toString', {}))).toBeInstanceOf(UnreadableTaskEventError);
    expect(refusal(stored('__proto__', {}))).toBeInstanceOf(UnreadableTaskEventError);
  });

  it.each([2, 0, 1.5])('refuses TurnCompleted at schema version %p, which this code does not write', (version) => {
    const error = refusal(stored('TurnCompleted', { turn: 1 }, version));
    expect(error).toBeInstanceOf(UnreadableTaskEventError);
    expect((error as Error).message).toContain(`schema version ${version}, but this code reads version 1`);
  });

  it.each([null, 'text', 42, ['turn', 1], undefined])('refuses data that is not an object: %p', (data) => {
    const error = refusal(stored('TurnCompleted', data));
    expect(error).toBeInstanceOf(UnreadableTaskEventError);
    expect((error as Error).message).toContain('data is not an object');
  });
});
