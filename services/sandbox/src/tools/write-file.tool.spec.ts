import { mkdir, readFile, readlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { TempWorkspace } from '@app/common/testing/temp-workspace';
import { createTempWorkspace } from '@app/common/testing/temp-workspace';
import { WRITE_FILE_MAX_BYTES, writeFileTool } from './write-file.tool';

describe('write_file', () => {
  let ws: TempWorkspace;
  beforeEach(async () => (ws = await createTempWorkspace()));
  afterEach(() => ws.cleanup());

  const run = (args: Record<string, unknown>) => writeFileTool.execute(args, { workspaceRoot: ws.root });

  it('creates missing parent directories and reports the bytes written', async () => {
    await expect(run({ path: 'downloads/report/a.md', content: 'héllo' })).resolves.toEqual({
      status: 'success',
      output: 'wrote 6 bytes to downloads/report/a.md',
    });
    expect(await readFile(join(ws.root, 'downloads/report/a.md'), 'utf8')).toBe('héllo');
  });

  it('replaces an existing file atomically, leaving no temp file behind', async () => {
    await ws.file('notes/a.md', 'old content');
    await run({ path: 'notes/a.md', content: 'new' });
    expect(await readFile(join(ws.root, 'notes/a.md'), 'utf8')).toBe('new');
    expect(await ws.names('notes')).toEqual(['a.md']);
  });

  it('writes an empty file', async () => {
    await expect(run({ path: 'empty.txt', content: '' })).resolves.toEqual({ status: 'success', output: 'wrote 0 bytes to empty.txt' });
  });

  it(`refuses content over ${WRITE_FILE_MAX_BYTES} bytes and writes nothing`, async () => {
    const result = await run({ path: 'huge.txt', content: 'a'.repeat(WRITE_FILE_MAX_BYTES + 1) });
    expect(result).toEqual({
      status: 'error',
      output: `content is ${WRITE_FILE_MAX_BYTES + 1} bytes, over the ${WRITE_FILE_MAX_BYTES}-byte limit of write_file; split it into several files`,
    });
    expect(await ws.names()).toEqual([]);
  });

  it('writes through a symlink inside the workspace to its target, keeping the link', async () => {
    await ws.file('real/a.txt', 'old');
    await ws.link('alias', 'real');
    await run({ path: 'alias/a.txt', content: 'new' });
    expect(await readFile(join(ws.root, 'real/a.txt'), 'utf8')).toBe('new');
    expect(await readlink(join(ws.root, 'alias'))).toBe('real');
  });

  it('refuses to write outside the workspace and creates nothing there', async () => {
    await ws.link('escape', ws.outside);
    await expect(run({ path: '../outside/x.txt', content: 'x' })).resolves.toMatchObject({
      status: 'error',
      output: expect.stringContaining('outside the workspace'),
    });
    await expect(run({ path: 'escape/sub/x.txt', content: 'x' })).resolves.toMatchObject({
      status: 'error',
      output: expect.stringContaining('through a symlink'),
    });
    await expect(readFile(join(ws.outside, 'x.txt'))).rejects.toMatchObject({ code: 'ENOENT' });
    await expect(readFile(join(ws.outside, 'sub/x.txt'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('refuses a path naming a directory', async () => {
    await mkdir(join(ws.root, 'src'));
    await expect(run({ path: 'src', content: 'x' })).resolves.toEqual({ status: 'error', output: '"src" is a directory, not a file' });
    await expect(run({ path: 'notes/', content: 'x' })).resolves.toEqual({
      status: 'error',
      output: '"notes/" ends with "/"; name a file, not a directory',
    });
    expect(await ws.names()).toEqual(['src']);
  });

  it('refuses to create a directory where a file is in the way', async () => {
    await ws.file('a.txt', 'x');
    await expect(run({ path: 'a.txt/b/c.txt', content: 'x' })).resolves.toEqual({
      status: 'error',
      output: 'cannot create the parent directories of "a.txt/b/c.txt": a part of the path is an existing file',
    });
  });

  it('answers missing, ill-typed or unknown arguments with an error result', async () => {
    await expect(run({ path: 'a.txt' })).resolves.toEqual({
      status: 'error',
      output: 'invalid arguments: missing required argument "content" (string)',
    });
    await expect(run({ path: 'a.txt', content: { text: 'x' } })).resolves.toEqual({
      status: 'error',
      output: 'invalid arguments: argument "content" must be a string, got an object',
    });
    await expect(run({ file: 'a.txt', content: 'x' })).resolves.toEqual({
      status: 'error',
      output: 'invalid arguments: unknown argument "file"; expected path, content',
    });
  });
});
