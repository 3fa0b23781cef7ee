import { mkdirSync, mkdtempSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { taskStreamId } from '@app/common';
import type { EventStore } from '@app/event-store';
import { createEventStoreFromConfig } from '@app/event-store';
import { LocalObjectStore } from '@app/object-store/local/local-object-store';
import type { CheckpointRef } from '@app/task-domain';
import { CheckpointReader, collectLineage, lineageMemberKey, rootEntryOf } from '@app/checkpoints';
import type { Baseline } from './baseline';
import { baselineOf } from './baseline';
import { writeCheckpoint } from './checkpoint-writer';

// Garbage collection against the real embedded event store and the local object store: the
// checkpoints the history names and the retention keeps stay readable, everything else of the
// lineage older than the grace time goes.

describe('collectLineage', () => {
  let dir: string;
  let ws: string;
  let objects: LocalObjectStore;
  let store: EventStore;
  let reader: CheckpointReader;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'gc-'));
    ws = join(dir, 'ws');
    mkdirSync(ws);
    objects = new LocalObjectStore(join(dir, 'objects'));
    store = await createEventStoreFromConfig({ DATA_DIR: join(dir, 'data') });
    reader = new CheckpointReader(objects);
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /**
   * Writes `steps` checkpoints of `taskId` (a file rewritten, the previous step's own file replaced
   * by this step's), recording all but those in `unrecorded`; after one of those, the next step
   * compares against the last recorded one, as the sandbox does.
   */
  async function history(taskId: string, steps: number, unrecorded: number[] = []): Promise<CheckpointRef[]> {
    let baseline: Baseline | undefined;
    const refs: CheckpointRef[] = [];
    const events = [{ type: 'TaskCreated', data: { taskId }, schemaVersion: 1 }];
    for (let seq = 1; seq <= steps; seq++) {
      writeFileSync(join(ws, 'file.txt'), `version ${seq}`);
      if (seq > 1) unlinkSync(join(ws, `only-${seq - 1}.txt`));
      writeFileSync(join(ws, `only-${seq}.txt`), `${seq}`.repeat(100));
      const written = await writeCheckpoint(objects, ws, baseline, { taskId, lineage: 'task_src', seq, maxAddedBytes: 1e9 });
      refs.push(written.ref);
      baseline = unrecorded.includes(seq) ? await baselineOf(reader, refs[seq - 2]) : written.baseline;
      if (!unrecorded.includes(seq)) {
        events.push({ type: 'ToolCallFinished', data: { callId: `c${seq}`, checkpoint: written.ref } as never, schemaVersion: 1 });
      }
    }
    await store.appendToStream(taskStreamId(taskId), events, 'no_stream');
    return refs;
  }
  const readable = async (ref: CheckpointRef) => {
    const files = await reader.files(rootEntryOf(ref), 1000);
    for (const f of files.files) {
      const entry = await reader.find(rootEntryOf(ref), f.path);
      for await (const _ of await reader.open(entry!)) void _;
    }
    return files.files.length;
  };

  it('keeps every recorded checkpoint with `all`, and removes the pack of one never recorded once past the grace time', async () => {
    const refs = await history('task_src', 4, [3]);
    const policy = (graceMs: number) => ({ retention: { keep: 'all' as const }, graceMs, now: Date.now() + 60_000 });
    expect((await collectLineage({ objects, reader, store }, 'task_src', policy(3_600_000))).deleted).toEqual([]);
    const { deleted } = await collectLineage({ objects, reader, store }, 'task_src', policy(1_000));
    expect(deleted).toHaveLength(1);
    expect(deleted[0]).toMatch(/^checkpoints\/task_src\/task_src\/3-[0-9]{13}-[0-9a-f]{8}-0\.pack$/);
    for (const seq of [1, 2, 4]) expect(await readable(refs[seq - 1])).toBe(2);
  });

  it('with last:1 keeps only what the last checkpoint needs, and that one stays whole', async () => {
    const refs = await history('task_src', 5);
    const { deleted } = await collectLineage({ objects, reader, store }, 'task_src', {
      retention: { keep: 'last', count: 1 },
      graceMs: 0,
      now: Date.now() + 1,
    });
    // Step 5 names nothing of steps 1–4 (each step replaced the file and the previous step's own).
    expect(deleted.map((k) => k.replace(/-[0-9]{13}-[0-9a-f]{8}-0\.pack$/, ''))).toEqual(
      [1, 2, 3, 4].map((seq) => `checkpoints/task_src/task_src/${seq}`),
    );
    expect(await readable(refs[4])).toBe(2);
    await expect(readable(refs[0])).rejects.toThrow();
  });

  it('keeps what a fork still names after its source moved on, through the fork marker', async () => {
    const refs = await history('task_src', 3);
    // The fork copied the source's history up to step 1 and never wrote a checkpoint of its own.
    await store.appendToStream(
      taskStreamId('task_fork'),
      [
        { type: 'TaskCreated', data: { taskId: 'task_fork' }, schemaVersion: 1 },
        { type: 'ToolCallFinished', data: { callId: 'c1', checkpoint: refs[0] } as never, schemaVersion: 1 },
      ],
      'no_stream',
    );
    const last1 = { retention: { keep: 'last' as const, count: 1 }, graceMs: 0, now: Date.now() + 1 };
    await objects.put(lineageMemberKey('task_src', 'task_fork'), Buffer.alloc(0));
    await collectLineage({ objects, reader, store }, 'task_src', last1);
    expect(await readable(refs[0])).toBe(2);
    expect(await readable(refs[2])).toBe(2);
    // Without the marker the same collection takes the fork's files away: the marker is what keeps them.
    await objects.delete(lineageMemberKey('task_src', 'task_fork'));
    await collectLineage({ objects, reader, store }, 'task_src', last1);
    await expect(readable(refs[0])).rejects.toThrow();
  });
});
