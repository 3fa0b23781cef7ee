import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EventStore, createEmbeddedEventStore } from '@app/event-store';
import { taskStreamId } from '@app/common';
import { TASK_EVENT_SCHEMA_VERSIONS, TaskEvent, UnreadableTaskEventError } from '@app/task-domain';
import { ProjectionCheckpointFile, SnapshotState, TaskViewsStore } from '.';

const created = (taskId: string, tenantId = 't1'): TaskEvent => ({
  type: 'TaskCreated',
  data: {
    taskId,
    tenantId,
    messageId: `msg_${taskId}`,
    text: 'hi',
    autoExecute: true,
    showInHistory: true,
    env: {},
    secretNames: [],
    files: [],
  },
});
const started = (turn = 1, messageId = 'm'): TaskEvent => ({ type: 'TurnStarted', data: { turn, messageId } });
const asNew = (e: TaskEvent) => ({ type: e.type, data: e.data, schemaVersion: TASK_EVENT_SCHEMA_VERSIONS[e.type] });

describe('TaskViewsStore (projection checkpointed to a file)', () => {
  let dir: string;
  let store: EventStore;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ats-views-'));
    store = await createEmbeddedEventStore({ dataDir: join(dir, 'es') });
  });
  afterAll(async () => {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });

  const checkpoint = (name: string) => new ProjectionCheckpointFile<SnapshotState>(join(dir, `${name}.json`), 60_000);

  it('rebuilds from the store when no checkpoint exists, then follows live appends', async () => {
    await store.appendToStream(taskStreamId('a'), [asNew(created('a'))], 'no_stream');
    const views = new TaskViewsStore(store, checkpoint('rebuild'));
    await views.start();
    expect(views.get('a')?.status).toBe('pending');
    const { lastGlobalPosition } = await store.appendToStream(taskStreamId('a'), [asNew(started())], 1);
    await views.waitForPosition(lastGlobalPosition);
    expect(views.get('a')?.status).toBe('running');
    await views.stop();
  });

  it('resumes from its checkpoint and catches up on what was appended while it was down', async () => {
    const file = checkpoint('resume');
    const first = new TaskViewsStore(store, file);
    await first.start();
    await store.appendToStream(taskStreamId('b'), [asNew(created('b'))], 'no_stream');
    await first.waitForPosition((await store.readAll()).at(-1)!.globalPosition);
    await first.stop(); // writes the checkpoint
    const saved = await file.load();
    expect(saved?.views.map((v) => v.id)).toContain('b');

    await store.appendToStream(taskStreamId('b'), [asNew(started())], 1);
    const second = new TaskViewsStore(store, checkpoint('resume'));
    await second.start();
    expect(second.get('b')?.status).toBe('running');
    expect(second.position).toBe((await store.readAll()).at(-1)!.globalPosition);
    await second.stop();
  });

  it("keeps each tenant's line of turns (MAX_RUNNING_TASKS_PER_TENANT) by global position, across a checkpoint", async () => {
    const file = checkpoint('line');
    const first = new TaskViewsStore(store, file);
    await first.start();
    const q1 = await store.appendToStream(
      taskStreamId('q1'),
      [asNew(created('q1', 'line-tenant')), asNew(started(1, 'msg_q1'))],
      'no_stream',
    );
    const q2 = await store.appendToStream(taskStreamId('q2'), [asNew(created('q2', 'line-tenant'))], 'no_stream');
    await first.waitForPosition(q2.lastGlobalPosition);
    const places = (views: TaskViewsStore) =>
      Object.fromEntries(views.turnQueue('line-tenant').map((e) => [e.taskId, e.running ?? e.waiting[0].position]));
    expect(places(first)).toEqual({ q1: q1.lastGlobalPosition - 1, q2: q2.lastGlobalPosition });
    await first.stop();

    await store.appendToStream(taskStreamId('q1'), [asNew({ type: 'TurnCompleted', data: { turn: 1 } })], 2);
    const second = new TaskViewsStore(store, checkpoint('line'));
    await second.start();
    expect(places(second)).toEqual({ q2: q2.lastGlobalPosition });
    expect(second.turnQueue('another-tenant')).toEqual([]);
    await second.stop();
  });

  it('ignores an unreadable checkpoint and rebuilds', async () => {
    await writeFile(join(dir, 'corrupt.json'), '{"checkpoint": 3, "views": [');
    const views = new TaskViewsStore(store, checkpoint('corrupt'));
    await views.start();
    expect(views.get('a')?.status).toBe('running');
    await views.stop();
  });

  it('lists only the tenant own tasks, newest first', async () => {
    await store.appendToStream(taskStreamId('c'), [asNew(created('c', 't2'))], 'no_stream');
    await store.appendToStream(taskStreamId('d'), [asNew(created('d', 't2'))], 'no_stream');
    const views = new TaskViewsStore(store);
    await views.start();
    expect(views.list('t2', { limit: 10, includeHidden: false }).tasks.map((t) => t.id)).toEqual(['d', 'c']);
    expect(views.list('nobody', { limit: 10, includeHidden: false })).toEqual({ tasks: [], nextCursor: null });
    await views.stop();
  });

  it('refresh() reads what another instance wrote before its live notification arrives', async () => {
    // A store whose live feed never delivers: the reader learns of the write only by refreshing.
    const deaf: EventStore = {
      appendToStream: (...args) => store.appendToStream(...args),
      readStream: (...args) => store.readStream(...args),
      streamRevision: (...args) => store.streamRevision(...args),
      readAll: (...args) => store.readAll(...args),
      onAppended: () => () => undefined,
      close: async () => undefined,
    };
    const views = new TaskViewsStore(deaf);
    await views.start();
    await store.appendToStream(taskStreamId('e'), [asNew(created('e'))], 'no_stream');
    expect(views.get('e')).toBeUndefined();
    await views.refresh();
    expect(views.get('e')?.status).toBe('pending');
    await views.stop();
  });

  it('stops just before an event it cannot read, never skipping it, and fails every read with it', async () => {
    const own = await createEmbeddedEventStore({ dataDir: join(dir, 'es-unreadable') });
    try {
      await own.appendToStream(taskStreamId('f'), [asNew(created('f'))], 'no_stream');
      const views = new TaskViewsStore(own);
      await views.start();
      const unknown = { type: 'TaskArchived', data: {}, schemaVersion: 1 };
      const { lastGlobalPosition } = await own.appendToStream(taskStreamId('f'), [unknown, asNew(started())], 1);
      await expect(views.refresh()).rejects.toBeInstanceOf(UnreadableTaskEventError);
      await expect(views.waitForPosition(lastGlobalPosition, 100)).rejects.toThrow('event 2 (TaskArchived) of stream task-f');
      // The TurnStarted after it is not applied either: the views stay where the stream was readable.
      expect(views.get('f')?.status).toBe('pending');
      expect(views.position).toBe(lastGlobalPosition - 2);
      await views.stop();

      const restarted = new TaskViewsStore(own);
      await expect(restarted.start()).rejects.toBeInstanceOf(UnreadableTaskEventError);
      await restarted.stop();
    } finally {
      await own.close();
    }
  });
});
