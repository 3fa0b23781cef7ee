import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CheckpointRef } from '@app/task-domain';
import { WorkspaceMarks, isStaleWorkspace } from './workspace-marks';

const ref = (seq: number, root: string): CheckpointRef => ({
  seq,
  lineage: 'task_a',
  root: { sha256: root.repeat(64), at: { key: 'k', offset: 0, length: 1 } },
  files: 1,
  addedBytes: 1,
});

describe('workspace marks', () => {
  it('calls a workspace stale only when the history went past the checkpoint it was at', () => {
    const mark = { seq: 5, root: 'a'.repeat(64) };
    expect(isStaleWorkspace(mark, ref(9, 'b'))).toBe(true);
    // Another instance checkpointed the same step differently (this one's result was never recorded).
    expect(isStaleWorkspace(mark, ref(5, 'b'))).toBe(true);
    expect(isStaleWorkspace(mark, ref(5, 'a'))).toBe(false);
    // A second call of the same answer, before the first one's result is recorded: this copy is the newest.
    expect(isStaleWorkspace(mark, ref(4, 'c'))).toBe(false);
    // No mark (written before marks, or lost in a crash), no checkpoint: as before marks.
    expect(isStaleWorkspace(undefined, ref(9, 'b'))).toBe(false);
    expect(isStaleWorkspace(mark, undefined)).toBe(false);
  });

  it('keeps one mark per task, and takes a damaged one for none', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'marks-'));
    try {
      const marks = new WorkspaceMarks(join(dir, '.checkpoint-marks'));
      expect(await marks.read('task_a')).toBeUndefined();
      await marks.write('task_a', ref(3, 'd'));
      await marks.write('task_a', ref(4, 'e'));
      expect(await marks.read('task_a')).toEqual({ seq: 4, root: 'e'.repeat(64) });
      writeFileSync(join(dir, '.checkpoint-marks', 'task_a.json'), '{"seq":4,');
      expect(await marks.read('task_a')).toBeUndefined();
      await marks.remove('task_a');
      await marks.remove('task_a');
      expect(await marks.read('task_a')).toBeUndefined();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
