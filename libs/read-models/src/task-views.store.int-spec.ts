import Database from 'better-sqlite3';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { EventStore } from '@app/event-store';
import { createEmbeddedEventStore } from '@app/event-store/embedded/embedded-event-store';
import { taskStreamId } from '@app/common';
import type { TaskEvent } from '@app/task-domain';
import { TASK_EVENT_SCHEMA_VERSIONS, UnreadableTaskEventError } from '@app/task-domain';
import { TaskViewsStore } from '.';

const created = (taskId: string, tenantId = 't1', showInHistory = true): TaskEvent => ({
  type: 'TaskCreated',
  data: {
    taskId,
    tenantId,
    messageId: `msg_${taskId}`,
    text: 'hi',
    autoExecute: true,
    showInHistory,
    env: {},
    secretNames: [],
    files: [],
  },
});
const started = (turn = 1, messageId = 'm'): TaskEvent => ({ type: 'TurnStarted', data: { turn, messageId } });
const asNew = (e: TaskEvent) => ({ type: e.type, data: e.data, schemaVersion: TASK_EVENT_SCHEMA_VERSIONS[e.type] });

describe('TaskViewsStore (projection checkpointed to a SQLite file)', () => {
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

  const fileOf = (name: string) => join(dir, `${name}.sqlite3`);
  const checkpoint = (name: string) => ({ path: fileOf(name), saveIntervalMs: 60_000 });
  /** The store, recording where each readAll starts: a resume reads from its checkpoint, a rebuild from 0. */
  const recordingReads = (starts: number[]): EventStore => ({
    ...store,
    readAll: (options) => (starts.push(options?.after ?? 0), store.readAll(options)),
    onAppended: (listener) => store.onAppended(listener),
  });
  const lastPosition = async () => (await store.readAll()).at(-1)!.globalPosition;

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
    const first = new TaskViewsStore(store, checkpoint('resume'));
    await first.start();
    await store.appendToStream(taskStreamId('b'), [asNew(created('b'))], 'no_stream');
    await first.waitForPosition(await lastPosition());
    const saved = first.position;
    await first.stop(); // saves the checkpoint

    await store.appendToStream(taskStreamId('b'), [asNew(started())], 1);
    const starts: number[] = [];
    const second = new TaskViewsStore(recordingReads(starts), checkpoint('resume'));
    await second.start();
    expect(starts[0]).toBe(saved);
    expect(second.get('b')?.status).toBe('running');
    expect(second.get('a')?.status).toBe('running');
    expect(second.position).toBe(await lastPosition());
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
    await writeFile(fileOf('corrupt'), '{"checkpoint": 3, "views": [');
    const views = new TaskViewsStore(store, checkpoint('corrupt'));
    await views.start();
    expect(views.get('a')?.status).toBe('running');
    await views.stop();
  });

  it('rebuilds from the store when the checkpoint holds views of another version, and deletes the JSON checkpoint it replaces', async () => {
    const first = new TaskViewsStore(store, checkpoint('version'));
    await first.start();
    await first.stop();
    const db = new Database(fileOf('version'));
    db.pragma('user_version = 7');
    db.close();
    const legacy = join(dir, 'task-views.json');
    await writeFile(legacy, '{"version": 7}');

    const starts: number[] = [];
    const second = new TaskViewsStore(recordingReads(starts), { ...checkpoint('version'), replaces: legacy });
    await second.start();
    expect(starts[0]).toBe(0);
    expect(second.get('a')?.status).toBe('running');
    await second.stop();
    await expect(readFile(legacy)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('reads back a view evicted from memory identical, before and after a restart, with the counts and active ids', async () => {
    const ids = ['ev1', 'ev2', 'ev3', 'ev4', 'ev5'];
    const first = new TaskViewsStore(store, { ...checkpoint('evict'), cachedViews: 2 });
    await first.start();
    for (const id of ids)
      await store.appendToStream(taskStreamId(id), [asNew(created(id, 'evict')), asNew(started(1, `msg_${id}`))], 'no_stream');
    await store.appendToStream(taskStreamId('ev1'), [asNew({ type: 'TurnCompleted', data: { turn: 1 } })], 2);
    await first.waitForPosition(await lastPosition());
    const fresh = new Map(ids.map((id) => [id, first.get(id)!]));
    first.list('evict', { limit: 1, includeHidden: true }); // saves: every view now lives in the table
    for (const id of ['ev4', 'ev5', 'ev3']) first.get(id); // the two most recent stay; ev1, ev2 were evicted

    const evicted = first.get('ev1');
    expect(evicted).not.toBe(fresh.get('ev1')); // parsed from the table, not the object held before
    expect(evicted).toEqual(fresh.get('ev1'));
    expect(evicted?.status).toBe('completed');
    expect(first.get('ev2')).toEqual(fresh.get('ev2'));
    const counts = first.countByStatus();
    const active = first.activeTaskIds();
    expect(active).toEqual(expect.arrayContaining(['ev2', 'ev3', 'ev4', 'ev5']));
    expect(active).not.toContain('ev1');
    await first.stop();

    const second = new TaskViewsStore(store, { ...checkpoint('evict'), cachedViews: 2 });
    await second.start();
    for (const id of ids) expect(second.get(id)).toEqual(fresh.get(id));
    expect(second.countByStatus()).toEqual(counts);
    expect(second.activeTaskIds().sort()).toEqual([...active].sort());
    expect(second.get('nobody')).toBeUndefined();
    await second.stop();
  });

  it('pages through a tenant list newest first across views evicted from memory, hidden ones only with includeHidden', async () => {
    const ids = ['p1', 'p2', 'p3', 'p4', 'p5', 'p6', 'p7'];
    const hidden = new Set(['p3', 'p6']);
    for (const id of ids) await store.appendToStream(taskStreamId(id), [asNew(created(id, 'pages', !hidden.has(id)))], 'no_stream');
    const views = new TaskViewsStore(store, { ...checkpoint('pages'), cachedViews: 1 });
    await views.start();
    const pages = (includeHidden: boolean) => {
      const seen: string[][] = [];
      let cursor: number | undefined;
      for (let i = 0; i < 10; i++) {
        const page = views.list('pages', { limit: 2, cursor, includeHidden });
        seen.push(page.tasks.map((t) => t.id));
        if (page.nextCursor === null) break;
        cursor = Number(page.nextCursor);
      }
      return seen;
    };
    expect(pages(true)).toEqual([['p7', 'p6'], ['p5', 'p4'], ['p3', 'p2'], ['p1']]);
    expect(pages(false)).toEqual([['p7', 'p5'], ['p4', 'p2'], ['p1']]);
    expect(views.list('pages', { limit: 10, includeHidden: false }).tasks.map((t) => t.id)).toEqual(['p7', 'p5', 'p4', 'p2', 'p1']);
    expect(views.list('pages', { limit: 1, includeHidden: false }).tasks[0]).toEqual(views.get('p7'));
    await views.stop();
  });

  it('works from memory when another process holds the checkpoint file (sandbox instances sharing a DATA_DIR)', async () => {
    const owner = new TaskViewsStore(store, checkpoint('shared'));
    await owner.start();
    const starts: number[] = [];
    const other = new TaskViewsStore(recordingReads(starts), checkpoint('shared'));
    await other.start();
    expect(starts[0]).toBe(0);
    expect(other.get('a')?.status).toBe('running');
    await other.stop();
    await owner.stop();
    // The owner's checkpoint was not disturbed: a restart resumes from it.
    const again: number[] = [];
    const third = new TaskViewsStore(recordingReads(again), checkpoint('shared'));
    await third.start();
    expect(again[0]).toBe(await lastPosition());
    await third.stop();
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
