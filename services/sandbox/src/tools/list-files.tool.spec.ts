import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { TempWorkspace } from '@app/common/testing/temp-workspace';
import { createTempWorkspace } from '@app/common/testing/temp-workspace';
import { LIST_FILES_MAX_DEPTH, LIST_FILES_MAX_ENTRIES, listFilesTool } from './list-files.tool';

describe('list_files', () => {
  let ws: TempWorkspace;
  beforeEach(async () => (ws = await createTempWorkspace()));
  afterEach(() => ws.cleanup());

  const run = (args: Record<string, unknown>, signal?: AbortSignal) => listFilesTool.execute(args, { workspaceRoot: ws.root, signal });

  it('lists the root recursively by default, one line per entry with type and size', async () => {
    await ws.file('src/a.ts', 'x'.repeat(120));
    await ws.file('src/lib/b.ts', '');
    await ws.file('README.md', 'hi');
    await mkdir(join(ws.root, 'empty'));
    await expect(run({})).resolves.toEqual({
      status: 'success',
      output: [
        'file    README.md (2 B)',
        'dir     empty/',
        'dir     src/',
        'file    src/a.ts (120 B)',
        'dir     src/lib/',
        'file    src/lib/b.ts (0 B)',
      ].join('\n'),
    });
  });

  it('lists a subdirectory with paths relative to the workspace root', async () => {
    await ws.file('src/a.ts', 'a');
    await ws.file('other.txt', 'o');
    await expect(run({ path: './src/' })).resolves.toEqual({ status: 'success', output: 'file    src/a.ts (1 B)' });
  });

  it('lists symlinks as such without following them, even when they point outside', async () => {
    await ws.link('escape', ws.outside);
    await ws.file('../outside/secret.txt', 'do not list');
    const result = await run({ path: '.' });
    expect(result.output).toBe('symlink escape');
  });

  it('describes a single file when the path names one', async () => {
    await ws.file('notes/a.md', 'hello');
    await expect(run({ path: 'notes/a.md' })).resolves.toEqual({ status: 'success', output: 'file    notes/a.md (5 B)' });
  });

  it('says so when the directory is empty', async () => {
    await expect(run({ path: '.' })).resolves.toEqual({ status: 'success', output: '"." is an empty directory' });
  });

  it(`stops at ${LIST_FILES_MAX_ENTRIES} entries and says the list was truncated`, async () => {
    await Promise.all(Array.from({ length: LIST_FILES_MAX_ENTRIES + 5 }, (_, i) => ws.file(`many/f${i}.txt`, '')));
    const lines = (await run({})).output.split('\n');
    expect(lines).toHaveLength(LIST_FILES_MAX_ENTRIES + 1);
    expect(lines[0]).toBe('dir     many/');
    expect(lines.at(-1)).toBe(`[truncated: stopped at ${LIST_FILES_MAX_ENTRIES} entries; list a subdirectory to see the rest]`);
  });

  it(`does not expand directories deeper than ${LIST_FILES_MAX_DEPTH} levels and says so`, async () => {
    const deep = Array.from({ length: LIST_FILES_MAX_DEPTH + 2 }, (_, i) => `d${i + 1}`).join('/');
    await ws.file(`${deep}/bottom.txt`, '');
    const lines = (await run({})).output.split('\n');
    expect(lines.at(-2)).toBe(`dir     ${deep.split('/').slice(0, LIST_FILES_MAX_DEPTH).join('/')}/`);
    expect(lines.at(-1)).toBe(`[truncated: 1 directory at depth ${LIST_FILES_MAX_DEPTH} not expanded; list it by path to go deeper]`);
  });

  it('answers with an error result for paths outside the workspace or missing', async () => {
    await expect(run({ path: '../outside' })).resolves.toEqual({ status: 'error', output: 'path "../outside" is outside the workspace' });
    await expect(run({ path: 'nope' })).resolves.toEqual({ status: 'error', output: '"nope" does not exist (list_files shows what does)' });
  });

  it('answers with an error result for ill-typed or unknown arguments', async () => {
    await expect(run({ path: 7 })).resolves.toEqual({
      status: 'error',
      output: 'invalid arguments: argument "path" must be a string, got a number',
    });
    await expect(run({ dir: 'src' })).resolves.toEqual({
      status: 'error',
      output: 'invalid arguments: unknown argument "dir"; expected path',
    });
  });

  it('stops with an error result once its signal has fired', async () => {
    await ws.file('a.txt', '');
    await expect(run({}, AbortSignal.abort())).resolves.toEqual({ status: 'error', output: 'cancelled before it finished' });
  });
});
