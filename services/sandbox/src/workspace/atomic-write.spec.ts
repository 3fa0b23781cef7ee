import { chmod, mkdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomic } from './atomic-write';
import type { TempWorkspace } from '@app/common/testing/temp-workspace';
import { createTempWorkspace } from '@app/common/testing/temp-workspace';

describe('writeFileAtomic', () => {
  let ws: TempWorkspace;
  beforeEach(async () => (ws = await createTempWorkspace()));
  afterEach(() => ws.cleanup());

  it('replaces the content of an existing file and leaves no temp file behind', async () => {
    const path = await ws.file('a.txt', 'old');
    await writeFileAtomic(path, 'new');
    expect(await readFile(path, 'utf8')).toBe('new');
    expect(await ws.names()).toEqual(['a.txt']);
  });

  it('keeps the permissions of the file it replaces', async () => {
    const path = await ws.file('run.sh', '#!/bin/sh\n');
    await chmod(path, 0o755);
    await writeFileAtomic(path, '#!/bin/sh\necho hi\n');
    expect((await stat(path)).mode & 0o777).toBe(0o755);
  });

  it('removes its temp file and keeps the target when the rename fails', async () => {
    await mkdir(join(ws.root, 'taken'));
    await expect(writeFileAtomic(join(ws.root, 'taken'), 'x')).rejects.toMatchObject({ code: 'EISDIR' });
    expect(await ws.names()).toEqual(['taken']);
  });

  it('does not replace the target once the signal has fired', async () => {
    const path = await ws.file('a.txt', 'old');
    await expect(writeFileAtomic(path, 'new', AbortSignal.abort())).rejects.toMatchObject({ name: 'AbortError' });
    expect(await readFile(path, 'utf8')).toBe('old');
    expect(await ws.names()).toEqual(['a.txt']);
  });

  it('copes with a target name near the file-name length limit', async () => {
    const path = join(ws.root, 'n'.repeat(250));
    await writeFileAtomic(path, 'x');
    expect(await readFile(path, 'utf8')).toBe('x');
  });
});
