import { execFileSync } from 'node:child_process';
import { mkdir, rename, symlink, writeFile } from 'node:fs/promises';
import type { Server } from 'node:net';
import { createServer } from 'node:net';
import { join } from 'node:path';
import type { TempWorkspace } from '@app/common/testing/temp-workspace';
import { createTempWorkspace } from '@app/common/testing/temp-workspace';
import { NoFollowDir } from './no-follow-dir';

describe('NoFollowDir', () => {
  let ws: TempWorkspace;
  let socketServer: Server | undefined;
  beforeEach(async () => (ws = await createTempWorkspace()));
  afterEach(async () => {
    socketServer?.close();
    socketServer = undefined;
    await ws.cleanup();
  });

  const withRoot = async <T>(body: (root: NoFollowDir) => Promise<T>): Promise<T> => {
    const root = await NoFollowDir.open(ws.root);
    try {
      return await body(root);
    } finally {
      await root.close();
    }
  };

  it('lists every entry with what it is, never following links', async () => {
    await ws.file('a.txt', 'a');
    await mkdir(join(ws.root, 'dir'));
    await ws.link('to-etc', '/etc');
    await ws.link('to-file', join(ws.outside, 'x'));
    execFileSync('mkfifo', [join(ws.root, 'pipe')]);
    socketServer = createServer();
    await new Promise<void>((resolve) => socketServer?.listen(join(ws.root, 'sock'), resolve));
    const entries = await withRoot((root) => root.list());
    expect(entries.map((e) => [e.name, e.kind, e.special])).toEqual([
      ['a.txt', 'file', undefined],
      ['dir', 'dir', undefined],
      ['pipe', 'special', 'a FIFO (named pipe)'],
      ['sock', 'special', 'a socket'],
      ['to-etc', 'symlink', undefined],
      ['to-file', 'symlink', undefined],
    ]);
  });

  it('refuses to open a symlink as a folder or a file, whatever it points at', async () => {
    await writeFile(join(ws.outside, 'secret'), 'OUTSIDE');
    await ws.link('dir-link', ws.outside);
    await ws.link('file-link', join(ws.outside, 'secret'));
    await ws.link('climb', '../outside/secret');
    await withRoot(async (root) => {
      expect(await root.openDir('dir-link')).toBeUndefined();
      expect(await root.openFile('file-link')).toBeUndefined();
      expect(await root.openFile('climb')).toBeUndefined();
      expect(await root.readLink('climb')).toBe('../outside/secret');
    });
  });

  it('never opens a FIFO (which would block) or a socket as a file', async () => {
    execFileSync('mkfifo', [join(ws.root, 'pipe')]);
    socketServer = createServer();
    await new Promise<void>((resolve) => socketServer?.listen(join(ws.root, 'sock'), resolve));
    await withRoot(async (root) => {
      expect(await root.openFile('pipe')).toBeUndefined();
      expect(await root.openFile('sock')).toBeUndefined();
    });
  });

  it('keeps reading the folder it opened when that folder is swapped for a link afterwards', async () => {
    await ws.file('downloads/report.txt', 'inside');
    await writeFile(join(ws.outside, 'report.txt'), 'OUTSIDE');
    await withRoot(async (root) => {
      const downloads = await root.openDir('downloads');
      expect(downloads).toBeDefined();
      // The name now leads outside; the open descriptor still names the real folder.
      await rename(join(ws.root, 'downloads'), join(ws.root, 'moved'));
      await symlink(ws.outside, join(ws.root, 'downloads'));
      const file = await downloads?.openFile('report.txt');
      const text = await file?.handle.readFile('utf8');
      await file?.handle.close();
      await downloads?.close();
      expect(text).toBe('inside');
      expect(await root.openDir('downloads')).toBeUndefined();
    });
  });

  it('reports a name that is not UTF-8 instead of mangling it', async () => {
    await writeFile(Buffer.concat([Buffer.from(`${ws.root}/bad-`), Buffer.from([0xff, 0xfe])]), 'x');
    const entries = await withRoot((root) => root.list());
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ kind: 'special', special: 'a name that is not valid UTF-8' });
  });

  it('refuses a symlink as the folder it is asked to open', async () => {
    await symlink(ws.outside, join(ws.root, 'link'));
    await expect(NoFollowDir.open(join(ws.root, 'link'))).rejects.toMatchObject({ code: expect.stringMatching(/^(ELOOP|ENOTDIR)$/) });
  });
});
