import { chown, mkdtemp, open, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { newId } from '@app/common';
import { EventStore, createEmbeddedEventStore } from '@app/event-store';
import { LocalObjectStore } from '@app/object-store';
import { TaskCommandExecutor } from '@app/task-commands';
import { BubblewrapProvider } from '../provider/bubblewrap/bubblewrap.provider';
import { TEST_LIMITS, testSandboxConfig } from '../provider/testing/sandbox-provider.contract';
import { SandboxSessions, SessionLimits } from './sandbox-sessions';

// Idle expiry against real parts (bubblewrap, local objects, the embedded store): a snapshot is
// bounded, stops as soon as its task is used again, and a slow one holds up no other.

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

  const sessionsWith = (limits: Partial<SessionLimits> = {}) =>
    new SandboxSessions(provider, objects, commands, join(dir, 'data', 'workspaces'), {
      idleTtlMs: 0,
      snapshotMaxBytes: 8 * BIG_BYTES,
      snapshotTimeoutMs: 60_000,
      ...limits,
    });

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

  const expiredEvents = async (taskId: string) => (await store.readStream(`task-${taskId}`)).filter((e) => e.type === 'SandboxExpired');

  it("a tool call stops its task's snapshot at once; the sandbox stays up and no partial snapshot is kept", async () => {
    const taskId = await taskWithWorkspace(BIG_BYTES);
    const sessions = sessionsWith();
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
    expect(await provider.exists(taskId)).toBe(true);
    expect(await objects.list(`snapshots/${taskId}/`)).toEqual([]);
    expect(await readdir(join(dir, 'objects', 'tmp'))).toEqual([]);
    await provider.destroy(taskId);
  }, 30_000);

  it('stops a snapshot at SANDBOX_SNAPSHOT_TIMEOUT_MS and keeps the sandbox up', async () => {
    const taskId = await taskWithWorkspace(BIG_BYTES);
    expect(await sessionsWith({ snapshotTimeoutMs: 100 }).expireIdle()).toEqual([]);
    expect(await expiredEvents(taskId)).toEqual([]);
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
});
