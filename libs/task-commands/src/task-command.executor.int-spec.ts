import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { taskStreamId } from '@app/common';
import type { EventStore, ReadStreamOptions, StoredEvent } from '@app/event-store';
import { createEmbeddedEventStore } from '@app/event-store/embedded/embedded-event-store';
import type { TaskEvent } from '@app/task-domain';
import { TASK_EVENT_SCHEMA_VERSIONS } from '@app/task-domain';
import { TaskCommandExecutor } from './task-command.executor';

const TASK = 'task_0123456789abcdef0123456789abcdef';

/** A read held until the test lets it answer, so loads can be interleaved at will. */
interface HeldRead {
  readonly fromRevision: number;
  release(): void;
}

describe('TaskCommandExecutor over a real embedded event store, loads interleaved', () => {
  let dir: string;
  let store: EventStore;
  const held: HeldRead[] = [];
  let holding = false;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'task-command-executor-'));
    store = await createEmbeddedEventStore({ dataDir: join(dir, 'eventstore') });
  });
  afterEach(async () => {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });

  /** The store, with each read answered from the store at once but handed back only on release. */
  const gated = (): EventStore =>
    Object.assign(Object.create(store) as EventStore, {
      readStream: async (streamId: string, options?: ReadStreamOptions): Promise<StoredEvent[]> => {
        const events = await store.readStream(streamId, options);
        if (!holding) return events;
        await new Promise<void>((release) => held.push({ fromRevision: options?.fromRevision ?? 1, release }));
        return events;
      },
    });
  const nextHeld = async (): Promise<HeldRead> => {
    for (let i = 0; i < 500 && held.length === 0; i++) await new Promise((r) => setTimeout(r, 5));
    const read = held.shift();
    if (!read) throw new Error('no read is waiting');
    return read;
  };
  const append = (events: TaskEvent[], expected: number | 'no_stream') =>
    store.appendToStream(
      taskStreamId(TASK),
      events.map((e) => ({ type: e.type, data: e.data, schemaVersion: TASK_EVENT_SCHEMA_VERSIONS[e.type] })),
      expected,
    );

  it('never takes an empty tail read after a cached revision for a task that does not exist', async () => {
    const created: TaskEvent = {
      type: 'TaskCreated',
      data: {
        taskId: TASK,
        tenantId: 't',
        messageId: 'msg_1',
        text: 'hi',
        autoExecute: true,
        showInHistory: true,
        env: {},
        secretNames: [],
        files: [],
      },
    };
    await append([created], 'no_stream');
    const executor = new TaskCommandExecutor(gated());
    await executor.load(TASK); // cached at revision 1
    holding = true;

    // A reads the tail after revision 1: nothing new yet.
    const a = executor.load(TASK);
    const aRead = await nextHeld();
    // Another process appends revision 2; B reads it, C too, and C puts it in the cache first.
    await append([{ type: 'TurnStarted', data: { turn: 1, messageId: 'msg_1' } }], 1);
    const b = executor.load(TASK);
    const bRead = await nextHeld();
    const c = executor.load(TASK);
    (await nextHeld()).release();
    expect((await c).events.map((e) => e.revision)).toEqual([1, 2]);
    // B's tail no longer continues the cache: the entry is dropped and B reads the whole stream (held).
    bRead.release();
    const bWhole = await nextHeld();
    expect(bWhole.fromRevision).toBe(1);
    // A's empty tail lands while nothing is cached.
    aRead.release();
    const aWhole = await nextHeld().catch(() => undefined);
    aWhole?.release();
    bWhole.release();
    const [loadedA, loadedB] = await Promise.all([a, b]);
    expect(loadedA.state.exists).toBe(true);
    expect(loadedA.events.map((e) => e.revision)).toEqual([1, 2]);
    expect(loadedB.events.map((e) => e.revision)).toEqual([1, 2]);
  });
});
