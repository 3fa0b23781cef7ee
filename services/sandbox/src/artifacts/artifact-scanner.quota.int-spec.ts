import { copyFile, lstat, mkdtemp, readdir, rm, truncate, utimes } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SecretVault } from '@app/common';
import type { TempWorkspace } from '@app/common/testing/temp-workspace';
import { createTempWorkspace } from '@app/common/testing/temp-workspace';
import { LocalObjectStore } from '@app/object-store/local/local-object-store';
import type { ArtifactRecord, ExistingTask, TaskEvent, TaskState } from '@app/task-domain';
import { diffArtifacts, evolve, initialTaskState } from '@app/task-domain';
import { NoFollowDir } from '../workspace/no-follow-dir';
import { ArtifactScanner, DEFAULT_SCAN_LIMITS } from './artifact-scanner';

// The attack this guards against: `truncate -s 1000M downloads/bigN.bin` three times took 20 KB
// of the workspace (sparse files) and 3 GiB of the object store. What the store holds for a task
// is bounded by SANDBOX_DISK_QUOTA_BYTES, counting each file's apparent size.

const TASK = 'task_0123456789abcdef0123456789abcdef';
const KiB = 1024;
const MiB = 1024 * KiB;
const QUOTA = 10 * MiB;
/** Each object file of the local store ends in a small metadata trailer, and files take whole blocks. */
const STORE_OVERHEAD = 64 * KiB;

const taskCreated: TaskEvent = {
  type: 'TaskCreated',
  data: {
    taskId: TASK,
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

/** The task as the service knows it between calls: each scan's records folded in as the events they become. */
class RecordedTask {
  private state: ExistingTask = existing([taskCreated].reduce(evolve, initialTaskState()));

  record(records: readonly ArtifactRecord[]): void {
    this.state = existing(diffArtifacts(this.state.artifacts, records, 'call').reduce(evolve, this.state));
  }

  get known() {
    return this.state.artifacts;
  }

  get stored() {
    return this.state.storedArtifacts;
  }
}

function existing(state: TaskState): ExistingTask {
  if (!state.exists) throw new Error('the task should exist');
  return state;
}

/** Bytes the folder takes on disk (allocated blocks), every file below it counted. */
async function diskUsage(dir: string): Promise<number> {
  let bytes = 0;
  for (const name of await readdir(dir, { recursive: true })) bytes += (await lstat(join(dir, name))).blocks * 512;
  return bytes;
}

describe('ArtifactScanner: what the store holds for a task is bounded by the quota', () => {
  let ws: TempWorkspace;
  let objectsDir: string;
  let scanner: ArtifactScanner;
  let task: RecordedTask;
  beforeEach(async () => {
    ws = await createTempWorkspace();
    objectsDir = await mkdtemp(join(tmpdir(), 'scanner-objects-'));
    scanner = new ArtifactScanner(new LocalObjectStore(objectsDir), { ...DEFAULT_SCAN_LIMITS, maxStoredBytes: QUOTA });
    task = new RecordedTask();
  });
  afterEach(async () => {
    jest.restoreAllMocks();
    await ws.cleanup();
    await rm(objectsDir, { recursive: true, force: true });
  });

  /** A sparse file as `truncate -s` leaves it, its first byte written so each one's content differs. */
  const sparse = async (rel: string, size: number, firstByte: string) => {
    const path = await ws.file(rel, firstByte);
    await truncate(path, size);
    return path;
  };
  const scan = async (options: Parameters<ArtifactScanner['scan']>[3] = {}) => {
    const result = await scanner.scan(TASK, ws.root, task.known, { ...options, stored: task.stored });
    task.record(result.records);
    return result;
  };
  const paths = (records: readonly ArtifactRecord[]) => records.map((r) => r.path);

  it('neither reads nor stores sparse files past the quota, and names each with its size; files that fit are stored', async () => {
    await sparse('downloads/a-fits.bin', 6 * MiB, 'a');
    for (const n of [1, 2, 3]) await sparse(`downloads/big${n}.bin`, 100 * MiB, String(n));
    await ws.file('downloads/z-small.txt', 'small');
    const opened = jest.spyOn(NoFollowDir.prototype, 'openFile');

    const { records, notes } = await scan();

    expect(paths(records)).toEqual(['downloads/a-fits.bin', 'downloads/z-small.txt']);
    const left = QUOTA - 6 * MiB;
    expect(notes).toEqual(
      [1, 2, 3].map(
        (n) =>
          `downloads/big${n}.bin (104857600 bytes) is not stored: the task's artifacts would pass ` +
          `SANDBOX_DISK_QUOTA_BYTES (10485760 bytes, ${left} left)`,
      ),
    );
    expect(opened.mock.calls.map(([name]) => name)).toEqual(['a-fits.bin', 'z-small.txt']);
    expect(await diskUsage(objectsDir)).toBeLessThan(QUOTA + STORE_OVERHEAD);
    expect(task.stored.bytes).toBe(6 * MiB + 5);
  });

  it('counts the files of one scan against one allowance, in scan order: a later smaller file that fits is still stored', async () => {
    for (const name of ['a', 'b', 'c']) await sparse(`downloads/${name}.bin`, 4 * MiB, name);
    await sparse('downloads/d.bin', 1 * MiB, 'd');

    const { records, notes } = await scan();

    expect(paths(records)).toEqual(['downloads/a.bin', 'downloads/b.bin', 'downloads/d.bin']);
    expect(notes).toEqual([
      `downloads/c.bin (4194304 bytes) is not stored: the task's artifacts would pass SANDBOX_DISK_QUOTA_BYTES (10485760 bytes, ${2 * MiB} left)`,
    ]);
    expect(task.stored.bytes).toBe(9 * MiB);
    expect(await diskUsage(objectsDir)).toBeLessThan(QUOTA + STORE_OVERHEAD);
  });

  it('is cumulative across scans: a later scan cannot add past the quota, and removing an artifact frees nothing', async () => {
    await sparse('downloads/first.bin', 6 * MiB, 'f');
    expect(paths((await scan()).records)).toEqual(['downloads/first.bin']);

    await sparse('downloads/second.bin', 6 * MiB, 's');
    const second = await scan();
    expect(paths(second.records)).toEqual(['downloads/first.bin']);
    expect(second.notes).toEqual([
      `downloads/second.bin (6291456 bytes) is not stored: the task's artifacts would pass SANDBOX_DISK_QUOTA_BYTES (10485760 bytes, ${4 * MiB} left)`,
    ]);

    // The store keeps first.bin's object after the artifact is removed, so it still counts.
    await rm(join(ws.root, 'downloads/first.bin'));
    const third = await scan();
    expect(third.records).toEqual([]);
    expect(third.notes).toHaveLength(1);
    expect(task.stored.bytes).toBe(6 * MiB);
    expect(await diskUsage(objectsDir)).toBeLessThan(QUOTA + STORE_OVERHEAD);
  });

  it('charges nothing for bytes the store already holds: a touched, copied or moved artifact near the quota is still recorded', async () => {
    const big = await sparse('downloads/big.bin', 6 * MiB, 'b');
    const [first] = (await scan()).records;
    const usedBefore = await diskUsage(objectsDir);

    await utimes(big, new Date(), new Date(Date.now() + 5_000));
    await copyFile(big, join(ws.root, 'downloads/copy.bin'));
    await copyFile(big, join(ws.root, 'downloads/moved.bin'));
    await rm(big);
    await copyFile(join(ws.root, 'downloads/copy.bin'), big);
    const { records, notes } = await scan();

    expect(notes).toEqual([]);
    expect(records.map((r) => [r.path, r.objectKey])).toEqual([
      ['downloads/big.bin', first.objectKey],
      ['downloads/copy.bin', first.objectKey],
      ['downloads/moved.bin', first.objectKey],
    ]);
    expect(task.stored.bytes).toBe(6 * MiB);
    expect(await diskUsage(objectsDir)).toBe(usedBefore);
  });

  it('names a file left out by its path with secrets masked', async () => {
    const vault = new SecretVault();
    vault.put(TASK, { TOKEN: 'tok-very-secret-value' });
    await sparse('downloads/dump-tok-very-secret-value.bin', 100 * MiB, 'x');

    const { records, notes } = await scan({ redact: (text) => vault.redact(TASK, text) });

    expect(records).toEqual([]);
    expect(notes).toContain(
      `downloads/dump-[REDACTED:TOKEN].bin (104857600 bytes) is not stored: the task's artifacts would pass SANDBOX_DISK_QUOTA_BYTES (10485760 bytes, 10485760 left)`,
    );
    expect(JSON.stringify(notes)).not.toContain('tok-very-secret-value');
  });
});
