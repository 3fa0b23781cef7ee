import { chown, mkdtemp, open, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { newId } from '@app/common';
import type { EventStore } from '@app/event-store';
import { createEmbeddedEventStore } from '@app/event-store/embedded/embedded-event-store';
import { LocalObjectStore } from '@app/object-store/local/local-object-store';
import { TaskCommandExecutor } from '@app/task-commands';
import { BubblewrapProvider } from '../provider/bubblewrap/bubblewrap.provider';
import { TEST_LIMITS, testSandboxConfig } from '../provider/testing/sandbox-provider.contract';
import type { SessionLimits } from './sandbox-sessions';
import { SandboxSessions } from './sandbox-sessions';

// Idle expiry against real parts (bubblewrap, local objects, the embedded store): a snapshot is
// bounded, stops as soon as its task is used again, and a slow one holds up no other; one that
// keeps failing is retried with backoff a bounded number of times, then given up on, on record.

const MiB = 1024 * 1024;
/** Written for real (zeros, not holes: a hole costs a snapshot nothing), so archiving it takes a while. */
const BIG_BYTES = 512 * MiB;

describe('SandboxSessions idle expiry', () => {
  let dir: string;
  let store: EventStore;
  let commands: TaskCommandExecutor;
  let provider: BubblewrapProvider;
  let objects: LocalObjectStore;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ats-sessions-'));
    store = await createEmbeddedEventStore({ dataDir: join(dir, 'eventstore') });
    commands = new TaskCommandExecutor(store);
    provider = new BubblewrapProvider(
      testSandboxConfig('bubblewrap', { ...TEST_LIMITS, diskQuotaBytes: 2 * BIG_BYTES }),
      join(dir, 'data'),
    );
    objects = new LocalObjectStore(join(dir, 'objects'));
  });
  afterAll(async () => {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });

  const sessionsWith = (limits: Partial<SessionLimits> = {}, redact?: (taskId: string, text: string) => string) =>
    new SandboxSessions(
      provider,
      objects,
      commands,
      join(dir, 'data', 'workspaces'),
      { idleTtlMs: 0, snapshotMaxBytes: 8 * BIG_BYTES, snapshotTimeoutMs: 60_000, snapshotMaxAttempts: 4, ...limits },
      redact,
    );

  /** A task whose workspace holds a file of `bytes`. */
  async function taskWithWorkspace(bytes: number): Promise<string> {
    const taskId = newId('task');
    await commands.execute(taskId, {
      type: 'CreateTask',
      data: {
        taskId,
        tenantId: 't',
        messageId: newId('msg'),
        text: 'go',
        autoExecute: true,
        showInHistory: true,
        env: {},
        secretNames: [],
        files: [],
      },
    });
    const workspace = await provider.create(taskId);
    const file = join(workspace, 'big.bin');
    const handle = await open(file, 'w');
    const chunk = Buffer.alloc(Math.min(bytes, 64 * MiB));
    for (let written = 0; written < bytes; written += chunk.length) await handle.write(chunk, 0, Math.min(chunk.length, bytes - written));
    await handle.close();
    const owner = provider.fileOwner(taskId);
    await chown(file, owner.uid, owner.gid);
    return taskId;
  }

  async function waitUntil(condition: () => Promise<boolean>): Promise<void> {
    for (const until = Date.now() + 10_000; !(await condition());) {
      if (Date.now() > until) throw new Error('condition not met in 10 s');
      await new Promise((r) => setTimeout(r, 10));
    }
  }

  const eventsOf = async (taskId: string, type: string) => (await store.readStream(`task-${taskId}`)).filter((e) => e.type === type);
  const expiredEvents = (taskId: string) => eventsOf(taskId, 'SandboxExpired');
  const snapshotFailedEvents = (taskId: string) => eventsOf(taskId, 'SandboxSnapshotFailed');

  it("a tool call stops its task's snapshot at once; the sandbox stays up, no partial snapshot is kept, and it is no failure", async () => {
    const taskId = await taskWithWorkspace(BIG_BYTES);
    // A single attempt allowed: had the stopped snapshot counted, it would be given up on, on record.
    const sessions = sessionsWith({ snapshotMaxAttempts: 1 });
    const sweep = sessions.expireIdle();
    // Under way: the archive is streaming into the object store's temp file.
    await waitUntil(async () => (await readdir(join(dir, 'objects', 'tmp')).catch(() => [])).length > 0);
    const askedAt = Date.now();
    const ranAfterMs = await sessions.use(taskId, async (root) => {
      expect(await stat(join(root, 'big.bin'))).toBeTruthy();
      return Date.now() - askedAt;
    });
    expect(await sweep).toEqual([]);
    // Archiving 1 GiB takes seconds here; the call waited only for the snapshot to notice.
    expect(ranAfterMs).toBeLessThan(1_000);
    expect(await expiredEvents(taskId)).toEqual([]);
    expect(await snapshotFailedEvents(taskId)).toEqual([]);
    expect(await provider.exists(taskId)).toBe(true);
    expect(await objects.list(`snapshots/${taskId}/`)).toEqual([]);
    expect(await readdir(join(dir, 'objects', 'tmp'))).toEqual([]);
    await provider.destroy(taskId);
  }, 30_000);

  it('stops a snapshot at SANDBOX_SNAPSHOT_TIMEOUT_MS and keeps the sandbox up; a last attempt says so in the history', async () => {
    const taskId = await taskWithWorkspace(BIG_BYTES);
    expect(await sessionsWith({ snapshotTimeoutMs: 100, snapshotMaxAttempts: 1 }).expireIdle()).toEqual([]);
    expect(await expiredEvents(taskId)).toEqual([]);
    expect((await snapshotFailedEvents(taskId)).map((e) => e.data)).toEqual([
      { reason: 'snapshot took longer than 100 ms (SANDBOX_SNAPSHOT_TIMEOUT_MS)', attempts: 1, kept: 'workspace' },
    ]);
    expect(await provider.exists(taskId)).toBe(true);
    expect(await objects.list(`snapshots/${taskId}/`)).toEqual([]);
    await provider.destroy(taskId);
  }, 30_000);

  it('a slow snapshot holds up no other: the small ones are recorded first', async () => {
    const slow = await taskWithWorkspace(BIG_BYTES / 4);
    const quick = [await taskWithWorkspace(1000), await taskWithWorkspace(1000)];
    const expired = await sessionsWith().expireIdle();
    expect([...expired].sort()).toEqual([slow, ...quick].sort());
    const [slowEvent] = await expiredEvents(slow);
    for (const taskId of quick) {
      const [event] = await expiredEvents(taskId);
      expect(event.globalPosition).toBeLessThan(slowEvent.globalPosition);
    }
  }, 60_000);

  it('sparse files (three of 1000 MB, a few bytes written): archived as holes, expired at the first sweep, restored with their apparent sizes', async () => {
    const taskId = await taskWithWorkspace(1000);
    const workspace = provider.workspacePath(taskId);
    const owner = provider.fileOwner(taskId);
    for (const name of ['a.bin', 'b.bin', 'c.bin']) {
      const handle = await open(join(workspace, name), 'w');
      await handle.write('x', 1000 * MiB);
      await handle.close();
      await chown(join(workspace, name), owner.uid, owner.gid);
    }
    // Set up as the attack had it: each file's apparent size is 1000 MB, what it holds a block.
    for (const name of ['a.bin', 'b.bin', 'c.bin'])
      expect(await stat(join(workspace, name))).toMatchObject({ size: 1000 * MiB + 1, blocks: expect.any(Number) });
    expect((await stat(join(workspace, 'a.bin'))).blocks * 512).toBeLessThan(MiB);

    const sessions = sessionsWith({ snapshotMaxBytes: 16 * MiB, snapshotMaxAttempts: 1 });
    expect(await sessions.expireIdle()).toEqual([taskId]);
    const [expired] = await expiredEvents(taskId);
    expect((expired.data as { sizeBytes: number }).sizeBytes).toBeLessThan(MiB);
    expect(await snapshotFailedEvents(taskId)).toEqual([]);

    const root = await sessions.use(taskId, async (path) => path);
    for (const name of ['a.bin', 'b.bin', 'c.bin']) {
      const restored = await stat(join(root, name));
      expect(restored.size).toBe(1000 * MiB + 1);
      expect(restored.blocks * 512).toBeLessThan(MiB);
    }
    await provider.destroy(taskId);
  }, 60_000);

  describe('a snapshot that always fails (larger than SANDBOX_SNAPSHOT_MAX_BYTES)', () => {
    const TTL = 60_000;
    let snapshots: jest.SpyInstance;
    beforeEach(() => (snapshots = jest.spyOn(provider, 'snapshot')));
    afterEach(() => snapshots.mockRestore());

    /** Sweeps at `from` plus each offset in turn; for each sweep, whether it tried to snapshot `taskId`. */
    async function sweepsTried(sessions: SandboxSessions, taskId: string, from: number, offsets: number[]): Promise<boolean[]> {
      const tried: boolean[] = [];
      for (const now of offsets.map((offset) => from + offset)) {
        const before = snapshots.mock.calls.filter(([id]) => id === taskId).length;
        await sessions.expireIdle(now);
        tried.push(snapshots.mock.calls.filter(([id]) => id === taskId).length > before);
      }
      return tried;
    }

    it('is tried again only as the backoff allows, then given up on once, on record; the workspace is kept as it is', async () => {
      const taskId = await taskWithWorkspace(1000);
      const sessions = sessionsWith({ idleTtlMs: TTL, snapshotMaxBytes: 1, snapshotMaxAttempts: 4 });
      const t0 = Date.now();
      // First seen at t0, so idle from then: tried at one TTL, then again 1, 2 and 4 TTLs after each failure.
      const offsets = [0, TTL - 1, TTL, 2 * TTL - 1, 2 * TTL, 4 * TTL - 1, 4 * TTL, 8 * TTL - 1, 8 * TTL, 9 * TTL, 100 * TTL];
      const tried = [false, false, true, false, true, false, true, false, true, false, false];
      expect(await sweepsTried(sessions, taskId, t0, offsets)).toEqual(tried);
      const failed = await snapshotFailedEvents(taskId);
      expect(failed.map((e) => e.data)).toEqual([{ reason: expect.stringContaining('exceeds 1 bytes'), attempts: 4, kept: 'workspace' }]);
      expect(await expiredEvents(taskId)).toEqual([]);
      expect(await provider.exists(taskId)).toBe(true);
      expect(await stat(join(provider.workspacePath(taskId), 'big.bin'))).toMatchObject({ size: 1000 });
      expect(await objects.list(`snapshots/${taskId}/`)).toEqual([]);
      expect(await readdir(join(dir, 'objects', 'tmp'))).toEqual([]);
      await provider.destroy(taskId);
    }, 60_000);

    it('has its whole budget back once the task is used again', async () => {
      const taskId = await taskWithWorkspace(1000);
      const sessions = sessionsWith({ idleTtlMs: TTL, snapshotMaxBytes: 1, snapshotMaxAttempts: 2 });
      const t0 = Date.now();
      expect(await sweepsTried(sessions, taskId, t0, [0, TTL, 2 * TTL, 50 * TTL])).toEqual([false, true, true, false]);
      expect(await snapshotFailedEvents(taskId)).toHaveLength(1);

      await sessions.use(taskId, async (root) => stat(join(root, 'big.bin')));
      const usedAt = Date.now();
      // Idle from the call on, with both attempts again: the first at one TTL, the second one TTL later.
      expect(await sweepsTried(sessions, taskId, usedAt, [TTL, 2 * TTL - 1, 2 * TTL, 50 * TTL])).toEqual([true, false, true, false]);
      expect((await snapshotFailedEvents(taskId)).map((e) => e.data)).toEqual([
        { reason: expect.stringContaining('exceeds 1 bytes'), attempts: 2, kept: 'workspace' },
        { reason: expect.stringContaining('exceeds 1 bytes'), attempts: 2, kept: 'workspace' },
      ]);
      expect(await provider.exists(taskId)).toBe(true);
      await provider.destroy(taskId);
    }, 60_000);

    it("records the reason with the task's secrets masked", async () => {
      const taskId = await taskWithWorkspace(1000);
      // Stands in for a secret value that appears in the error: the bound is part of the message.
      const sessions = sessionsWith({ snapshotMaxBytes: 1, snapshotMaxAttempts: 1 }, (_taskId, text) =>
        text.replaceAll('exceeds 1 bytes', 'exceeds [REDACTED:LIMIT] bytes'),
      );
      await sessions.expireIdle();
      const [failed] = await snapshotFailedEvents(taskId);
      expect(failed.data).toMatchObject({ reason: expect.stringContaining('exceeds [REDACTED:LIMIT] bytes'), attempts: 1 });
      await provider.destroy(taskId);
    }, 60_000);
  });
});
