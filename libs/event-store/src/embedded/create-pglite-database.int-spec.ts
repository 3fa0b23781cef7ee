import { access, mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensurePgliteDatabase } from './create-pglite-database';
import { createEmbeddedEventStore } from './embedded-event-store';

describe('creating the embedded database in a child process', () => {
  let root: string;
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'pglite-init-'));
  });
  afterEach(() => rm(root, { recursive: true, force: true }));

  it('creates a database in a fresh directory, leaving no staging directory behind', async () => {
    const dataDir = join(root, 'nested', 'eventstore');
    await ensurePgliteDatabase(dataDir);
    await expect(access(join(dataDir, 'PG_VERSION'))).resolves.toBeUndefined();
    expect(await readdir(join(root, 'nested'))).toEqual(['eventstore']);
  });

  it('removes a staging directory left by a process that is gone, keeping one whose process runs', async () => {
    const dataDir = join(root, 'eventstore');
    const gone = spawnSync(process.execPath, ['-e', '']).pid;
    const running = process.ppid;
    await mkdir(join(root, `eventstore.creating-${gone}`));
    await mkdir(join(root, `eventstore.creating-${running}`));
    await ensurePgliteDatabase(dataDir);
    expect((await readdir(root)).sort()).toEqual(['eventstore', `eventstore.creating-${running}`]);
  });

  it('opens a store over a fresh directory and keeps its events when reopened', async () => {
    const dataDir = join(root, 'eventstore');
    const first = await createEmbeddedEventStore({ dataDir });
    const written = await first.appendToStream('task-1', [{ type: 'TaskCreated', data: { n: 1 }, schemaVersion: 1 }], 'no_stream');
    await first.close();

    const reopened = await createEmbeddedEventStore({ dataDir });
    try {
      expect(await reopened.readAll()).toEqual(written.events);
    } finally {
      await reopened.close();
    }
  });

  it('reports a failing child with its stderr', async () => {
    const saved = process.env.NODE_OPTIONS;
    process.env.NODE_OPTIONS = `--require ${join(root, 'no-such-preload.js')}`;
    try {
      await expect(ensurePgliteDatabase(join(root, 'eventstore'))).rejects.toThrow(
        /creating the PGlite database in .*eventstore failed: the child process exited with code 1; stderr: .*no-such-preload/s,
      );
    } finally {
      if (saved === undefined) delete process.env.NODE_OPTIONS;
      else process.env.NODE_OPTIONS = saved;
    }
    expect(await readdir(root)).toEqual([]);
  });

  it('stops a child that takes longer than the bound and says so', async () => {
    await expect(ensurePgliteDatabase(join(root, 'eventstore'), 50)).rejects.toThrow(
      /the child process did not finish within 50 ms and was stopped/,
    );
    expect(await readdir(root)).toEqual([]);
  });

  it('refuses a data directory that is a file', async () => {
    const dataDir = join(root, 'eventstore');
    await writeFile(dataDir, 'not a database');
    await expect(createEmbeddedEventStore({ dataDir })).rejects.toThrow(/holds files but no PGlite database/);
    expect(await readdir(root)).toEqual(['eventstore']);
  });
});
