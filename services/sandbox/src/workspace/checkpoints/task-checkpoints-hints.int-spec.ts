import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CheckpointReader } from '@app/checkpoints';
import { newId } from '@app/common';
import { LocalObjectStore } from '@app/object-store/local/local-object-store';
import type { CheckpointRef } from '@app/task-domain';
import { TaskUids } from '../../provider/bubblewrap/host/task-uids';
import { WorkspaceVolumes } from '../../provider/bubblewrap/host/workspace-volumes';
import type { ChangeHints, Hints } from './change-hints';
import { FanotifyHints } from './fanotify-hints';
import { TaskCheckpoints } from './task-checkpoints';
import { builtFswatch } from './testing/loop-image';

/** The real helper, with each call and each drained answer written down. */
class RecordedHints implements ChangeHints {
  readonly calls: string[] = [];
  readonly drained: (Hints | 'rescan')[] = [];
  constructor(private readonly inner: ChangeHints) {}
  async watch(taskId: string, mountpoint: string) {
    this.calls.push(`watch ${mountpoint}`);
    await this.inner.watch(taskId, mountpoint);
  }
  async drain(taskId: string) {
    const answer = await this.inner.drain(taskId);
    this.drained.push(answer);
    return answer;
  }
  async unwatch(taskId: string) {
    this.calls.push('unwatch');
    await this.inner.unwatch(taskId);
  }
  close() {
    return this.inner.close();
  }
}

describe("checkpoints told by the workspace volumes' fanotify watch (filesystem workspaces)", () => {
  let dir: string;
  let hints: RecordedHints;
  let volumes: WorkspaceVolumes;
  let checkpoints: TaskCheckpoints;
  const taskId = newId('task');

  beforeAll(() => {
    const binary = builtFswatch();
    dir = mkdtempSync(join(tmpdir(), 'ckpt-wired-'));
    hints = new RecordedHints(new FanotifyHints(binary));
    const settings = { dataDir: join(dir, 'data'), runtimeDir: join(dir, 'run'), quotaBytes: 64 * 1024 ** 2 };
    volumes = new WorkspaceVolumes(settings, new TaskUids(join(dir, 'run', 'uids'), 61_000, 100), 'filesystem', hints);
    const objects = new LocalObjectStore(join(dir, 'objects'));
    checkpoints = new TaskCheckpoints(objects, new CheckpointReader(objects), 1024 ** 3, hints);
  });
  afterAll(async () => {
    await volumes.destroy(taskId).catch(() => undefined);
    await hints.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('watches the image while mounted, uses what it drains only against the baseline it kept, and lets go before unmounting', async () => {
    const { path: root } = await volumes.open(taskId);
    expect(hints.calls).toEqual([`watch ${root}`]);
    const step = async (last: CheckpointRef | undefined) => {
      const result = await checkpoints.afterStep(taskId, root, last);
      if (!('changes' in result)) throw new Error(result.skipped);
      return result;
    };

    writeFileSync(join(root, 'a.txt'), 'one');
    const first = await step(undefined);
    expect(hints.drained.pop()).toBe('rescan');
    expect(first.changes.map((c) => c.path)).toEqual(['a.txt']);

    writeFileSync(join(root, 'downloads', 'b.txt'), 'two');
    const second = await step(first.checkpoint);
    expect(hints.drained.pop()).toEqual({
      touched: new Set(['downloads']),
      subtrees: new Set(),
      names: new Map([['downloads', new Set(['b.txt'])]]),
    });
    expect(second.changes).toEqual([{ path: 'downloads/b.txt', change: 'created', size: 3 }]);

    // The kept baseline is gone (the sandbox left and came back): what was drained is not enough.
    await checkpoints.forget(taskId);
    writeFileSync(join(root, 'a.txt'), 'changed');
    const third = await step(second.checkpoint);
    expect(third.changes).toEqual([{ path: 'a.txt', change: 'modified', size: 7 }]);

    await volumes.destroy(taskId);
    expect(hints.calls).toEqual([`watch ${root}`, 'unwatch']);
    // Unmounted for real, not detached lazily with the helper still holding it.
    expect(execFileSync('losetup', ['-a']).toString()).not.toContain(taskId);
  });
});
