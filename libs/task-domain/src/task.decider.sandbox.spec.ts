import { DeciderSpecification } from '@app/common/testing/decider-spec';
import type { TaskCommand } from './task.decider';
import { decide } from './task.decider';
import { SandboxAlreadyExpiredError, SandboxNotInSnapshotError, TurnNotRunningError } from './task.errors';
import type { ArtifactRecord, TaskCreated, TaskEvent } from './task.events';
import type { TaskState } from './task.state';
import { evolve, initialTaskState } from './task.state';

// Artifacts, sandbox expiry and lost secrets: the events the sandbox issue added.

const spec = DeciderSpecification.for<TaskState, TaskCommand, TaskEvent>({ decide, evolve, initialState: initialTaskState });

const created = (secretNames: string[] = []): TaskCreated => ({
  type: 'TaskCreated',
  data: {
    taskId: 't',
    tenantId: 'ten',
    messageId: 'm1',
    text: 'hi',
    autoExecute: true,
    showInHistory: true,
    env: {},
    secretNames,
    files: [],
  },
});
const usage = { inputTokens: 1, outputTokens: 1, totalTokens: 2 };
const runningCall: TaskEvent[] = [
  created(),
  { type: 'TurnStarted', data: { turn: 1, messageId: 'm1' } },
  { type: 'ModelResponded', data: { turn: 1, step: 1, model: 'x', finishReason: 'tool_calls', usage } },
  { type: 'ToolCallRequested', data: { turn: 1, step: 1, callId: 'c1', toolName: 'shell', args: { command: 'x' }, status: 'approved' } },
  { type: 'ToolCallStarted', data: { callId: 'c1', toolName: 'shell' } },
];
const artifact = (path: string, sha256: string, size = 3): ArtifactRecord => ({
  path,
  name: path.split('/').pop() ?? path,
  size,
  sha256,
  category: 'text',
  mimeType: 'text/plain',
  modifiedAt: '2026-01-01T00:00:00.000Z',
  objectKey: `artifacts/t/${sha256}`,
});
const finish = (artifacts?: ArtifactRecord[]): TaskCommand => ({
  type: 'FinishToolCall',
  data: { callId: 'c1', status: 'success', output: 'ok', exitCode: 0, durationMs: 5, ...(artifacts ? { artifacts } : {}) },
});
const finished: TaskEvent = {
  type: 'ToolCallFinished',
  data: { callId: 'c1', toolName: 'shell', status: 'success', output: 'ok', exitCode: 0, durationMs: 5 },
};
const recorded = (a: ArtifactRecord): TaskEvent => ({ type: 'ArtifactRecorded', data: { ...a, callId: 'c1' } });

describe('task decider: artifacts', () => {
  it('records nothing when the call did not scan downloads/', () => spec.given(runningCall).when(finish()).then([finished]));

  it('records new files with the tool result, in path order', () =>
    spec
      .given(runningCall)
      .when(finish([artifact('downloads/b.txt', 'bb'), artifact('downloads/a.txt', 'aa')]))
      .then([finished, recorded(artifact('downloads/a.txt', 'aa')), recorded(artifact('downloads/b.txt', 'bb'))]));

  it('records a changed file again but not an unchanged one, and a vanished one as removed', () =>
    spec
      .given([
        ...runningCall.slice(0, 1),
        recorded(artifact('downloads/same.txt', 's1')),
        recorded(artifact('downloads/changed.txt', 'c1')),
        recorded(artifact('downloads/gone.txt', 'g1')),
        ...runningCall.slice(1),
      ])
      .when(finish([artifact('downloads/same.txt', 's1'), artifact('downloads/changed.txt', 'c2')]))
      .then([
        finished,
        recorded(artifact('downloads/changed.txt', 'c2')),
        { type: 'ArtifactRemoved', data: { path: 'downloads/gone.txt', callId: 'c1' } },
      ]));
});

describe('task decider: sandbox expiry', () => {
  const expired: TaskEvent = { type: 'SandboxExpired', data: { snapshotKey: 'snap/1', sizeBytes: 10, idleMs: 1000 } };
  it('records an expiry', () =>
    spec
      .given([created()])
      .when({ type: 'RecordSandboxExpired', data: expired.data as never })
      .then([expired]));
  it('refuses a second expiry before a restore', () =>
    spec
      .given([created(), expired])
      .when({ type: 'RecordSandboxExpired', data: { snapshotKey: 'snap/2', sizeBytes: 1, idleMs: 1 } })
      .thenThrows(SandboxAlreadyExpiredError));
  it('records the restore of the snapshot it expired into', () =>
    spec
      .given([created(), expired])
      .when({ type: 'RecordSandboxRestored', data: { snapshotKey: 'snap/1', durationMs: 42 } })
      .then([{ type: 'SandboxRestored', data: { snapshotKey: 'snap/1', durationMs: 42 } }]));
  it('refuses a restore from another snapshot, or when nothing expired', () => {
    spec
      .given([created(), expired])
      .when({ type: 'RecordSandboxRestored', data: { snapshotKey: 'snap/0', durationMs: 1 } })
      .thenThrows(SandboxNotInSnapshotError);
    spec
      .given([created()])
      .when({ type: 'RecordSandboxRestored', data: { snapshotKey: 'snap/1', durationMs: 1 } })
      .thenThrows(SandboxNotInSnapshotError);
  });
});

describe('task decider: a snapshot that keeps failing', () => {
  const data = { reason: 'snapshot exceeds 10 bytes (SANDBOX_SNAPSHOT_MAX_BYTES)', attempts: 4, kept: 'workspace' as const };
  const expired: TaskEvent = { type: 'SandboxExpired', data: { snapshotKey: 'snap/1', sizeBytes: 10, idleMs: 1000 } };

  it('records why, after how many attempts, and that the workspace was kept', () =>
    spec
      .given([created()])
      .when({ type: 'RecordSandboxSnapshotFailed', data })
      .then([{ type: 'SandboxSnapshotFailed', data }]));

  it('leaves the sandbox live: a later expiry is still recorded', () =>
    spec
      .given([created(), { type: 'SandboxSnapshotFailed', data }])
      .when({ type: 'RecordSandboxExpired', data: expired.data as never })
      .then([expired]));

  it('refuses a failure for a sandbox that has expired already', () =>
    spec.given([created(), expired]).when({ type: 'RecordSandboxSnapshotFailed', data }).thenThrows(SandboxAlreadyExpiredError));
});

describe('task decider: secrets a process cannot open', () => {
  const reason = 'Secrets TOKEN cannot be opened: wrong key.';
  const report = (turn = 1): TaskCommand => ({ type: 'ReportSecretsUnavailable', data: { turn, reason } });
  const withSecrets = [created(['TOKEN']), ...runningCall.slice(1)];
  const unavailable: TaskEvent = { type: 'SecretsUnavailable', data: { names: ['TOKEN'], reason } };
  const nothingSpent = { inputTokens: 0, outputTokens: 0, totalTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, costUsd: 0 };
  const failed: TaskEvent = { type: 'TaskFailed', data: { turn: 1, error: reason, usage: nothingSpent } };
  const failedAfterACall: TaskEvent = {
    type: 'TaskFailed',
    data: { turn: 1, error: reason, usage: { ...usage, cacheReadTokens: 0, cacheWriteTokens: 0, costUsd: null } },
  };

  it('fails the turn with the reason, naming the secrets in a notice', () =>
    spec.given(withSecrets.slice(0, 2)).when(report()).then([unavailable, failed]));

  it('closes the call that was about to run with the reason, so it never runs', () =>
    spec
      .given(withSecrets)
      .when(report())
      .then([
        { type: 'ToolCallFinished', data: { callId: 'c1', toolName: 'shell', status: 'error', output: reason, durationMs: 0 } },
        unavailable,
        failedAfterACall,
      ]));

  it('starts the queued follow-up after the failed turn, like any failed turn', () =>
    spec
      .given([...withSecrets.slice(0, 2), { type: 'UserMessageAdded', data: { messageId: 'm2', text: 'next', queued: true } }])
      .when(report())
      .then([unavailable, failed, { type: 'TurnStarted', data: { turn: 2, messageId: 'm2' } }]));

  it('refuses a report for a turn that is not running (not started, another turn, or over)', () => {
    spec
      .given([created(['TOKEN'])])
      .when(report(0))
      .thenThrows(TurnNotRunningError);
    spec.given(withSecrets.slice(0, 2)).when(report(2)).thenThrows(TurnNotRunningError);
    spec
      .given([...withSecrets.slice(0, 2), failed])
      .when(report())
      .thenThrows(TurnNotRunningError);
  });

  it('says nothing for a task without secrets', () => spec.given(runningCall).when(report()).then([]));

  it('still folds a SecretsUnavailable written before durable secrets (the old restart notice)', () =>
    spec
      .given([created(['TOKEN']), { type: 'SecretsUnavailable', data: { names: ['TOKEN'], reason: 'the service restarted' } }])
      .when({ type: 'StartTurn', data: {} })
      .then([{ type: 'TurnStarted', data: { turn: 1, messageId: 'm1' } }]));
});

describe('task decider: an MCP server the task cannot use', () => {
  const report = (reason: string): TaskCommand => ({ type: 'ReportMcpServerUnavailable', data: { server: 'internal', reason } });
  const refused: TaskEvent = { type: 'McpServerUnavailable', data: { server: 'internal', reason: 'a loopback address' } };

  it('records why its tools are left out', () => spec.given([created()]).when(report('a loopback address')).then([refused]));

  it('says it once per server and reason, not at every tool listing', () =>
    spec.given([created(), refused]).when(report('a loopback address')).then([]));

  it('says it again when the reason changes', () =>
    spec
      .given([created(), refused])
      .when(report('connection refused'))
      .then([{ type: 'McpServerUnavailable', data: { server: 'internal', reason: 'connection refused' } }]));
});

describe('task decider: symlinks leading out of the workspace', () => {
  const finishWith = (escapingLinks: string[]): TaskCommand => ({
    type: 'FinishToolCall',
    data: { callId: 'c1', status: 'success', output: 'ok', exitCode: 0, durationMs: 5, artifacts: [], escapingLinks },
  });
  const changed = (links: string[]): TaskEvent => ({ type: 'ArtifactLinksChanged', data: { callId: 'c1', links } });

  it('records the links the scan found', () =>
    spec
      .given(runningCall)
      .when(finishWith(['downloads/x', 'downloads']))
      .then([finished, changed(['downloads', 'downloads/x'])]));

  it('records nothing when they are the ones already known, in any order', () =>
    spec
      .given([...runningCall.slice(0, 1), changed(['downloads', 'downloads/x']), ...runningCall.slice(1)])
      .when(finishWith(['downloads/x', 'downloads']))
      .then([finished]));

  it('records that they are gone', () =>
    spec
      .given([...runningCall.slice(0, 1), changed(['downloads/x']), ...runningCall.slice(1)])
      .when(finishWith([]))
      .then([finished, changed([])]));

  it('leaves them as they were when the call was not scanned', () =>
    spec
      .given([...runningCall.slice(0, 1), changed(['downloads/x']), ...runningCall.slice(1)])
      .when(finish())
      .then([finished]));
});

describe('task decider: egress', () => {
  const pypi = { host: 'pypi.org', port: 443, allowed: true, bytesOut: 900, bytesIn: 52_000, durationMs: 310 };
  const refused = {
    host: '10.0.0.1',
    port: 80,
    allowed: false,
    reason: 'refused: not a public address',
    bytesOut: 0,
    bytesIn: 0,
    durationMs: 1,
  };
  const finishWith = (egress: (typeof pypi | typeof refused)[]): TaskCommand => ({
    type: 'FinishToolCall',
    data: { callId: 'c1', status: 'success', output: 'ok', exitCode: 0, durationMs: 5, egress },
  });

  it("records each connection, in order, before the call's result", () =>
    spec
      .given(runningCall)
      .when(finishWith([pypi, refused]))
      .then([
        { type: 'EgressRecorded', data: { callId: 'c1', ...pypi } },
        { type: 'EgressRecorded', data: { callId: 'c1', ...refused } },
        finished,
      ]));

  it('records none for a command that connected nowhere', () => spec.given(runningCall).when(finishWith([])).then([finished]));
});
