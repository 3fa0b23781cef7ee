import type { ArtifactRecord, TaskEvent } from '../task.events';
import type { TaskState } from '../task.state';
import { evolve, initialTaskState } from '../task.state';

// What the artifact store holds for a task, folded from its events: the total that
// SANDBOX_DISK_QUOTA_BYTES bounds.

const created: TaskEvent = {
  type: 'TaskCreated',
  data: {
    taskId: 't',
    tenantId: 'ten',
    messageId: 'm1',
    text: 'hi',
    autoExecute: true,
    showInHistory: true,
    env: {},
    secretNames: [],
    files: [],
  },
};
const recorded = (path: string, sha256: string, size: number): TaskEvent => {
  const record: ArtifactRecord = {
    path,
    name: path.split('/').pop() ?? path,
    size,
    sha256,
    category: 'other',
    mimeType: 'application/octet-stream',
    modifiedAt: '2026-01-01T00:00:00.000Z',
    objectKey: `artifacts/t/${sha256}`,
  };
  return { type: 'ArtifactRecorded', data: { ...record, callId: 'c1' } };
};
const removed = (path: string): TaskEvent => ({ type: 'ArtifactRemoved', data: { path, callId: 'c1' } });

const storedAfter = (events: TaskEvent[]) => {
  const state: TaskState = [created, ...events].reduce(evolve, initialTaskState());
  if (!state.exists) throw new Error('the task should exist');
  return state.storedArtifacts;
};

describe('task state: what the artifact store holds for the task', () => {
  it('holds nothing for a new task', () => {
    expect(storedAfter([])).toEqual({ objects: {}, bytes: 0 });
  });

  it('adds up the objects the recorded artifacts name', () => {
    expect(storedAfter([recorded('downloads/a.bin', 'aa', 100), recorded('downloads/b.bin', 'bb', 30)])).toEqual({
      objects: { 'artifacts/t/aa': 100, 'artifacts/t/bb': 30 },
      bytes: 130,
    });
  });

  it('counts the same bytes once, at any path and however often recorded (one content-addressed object)', () => {
    const stored = storedAfter([
      recorded('downloads/a.bin', 'aa', 100),
      recorded('downloads/copy-of-a.bin', 'aa', 100),
      recorded('downloads/a.bin', 'aa', 100),
    ]);
    expect(stored.bytes).toBe(100);
  });

  it('keeps counting the earlier content of a changed file: the store still holds it', () => {
    expect(storedAfter([recorded('downloads/a.bin', 'v1', 100), recorded('downloads/a.bin', 'v2', 40)]).bytes).toBe(140);
  });

  it('frees nothing when an artifact is removed, nor charges again when the same bytes come back', () => {
    const stored = storedAfter([
      recorded('downloads/a.bin', 'aa', 100),
      removed('downloads/a.bin'),
      recorded('downloads/b.bin', 'aa', 100),
    ]);
    expect(stored).toEqual({ objects: { 'artifacts/t/aa': 100 }, bytes: 100 });
  });
});
