import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { TempWorkspace } from '@app/common/testing/temp-workspace';
import { createTempWorkspace } from '@app/common/testing/temp-workspace';
import { editFileTool } from './edit-file.tool';

describe('edit_file', () => {
  let ws: TempWorkspace;
  beforeEach(async () => (ws = await createTempWorkspace()));
  afterEach(() => ws.cleanup());

  const run = (args: Record<string, unknown>) => editFileTool.execute(args, { workspaceRoot: ws.root });
  const content = (rel: string) => readFile(join(ws.root, rel), 'utf8');

  it('replaces the single occurrence of oldText, reports its line and leaves no temp file', async () => {
    await ws.file('src/a.ts', 'const a = 1;\nconst b = 2;\n');
    await expect(run({ path: 'src/a.ts', oldText: 'b = 2', newText: 'b = 3' })).resolves.toEqual({
      status: 'success',
      output: 'edited src/a.ts: replaced 1 occurrence at line 2; the file is now 26 bytes',
    });
    expect(await content('src/a.ts')).toBe('const a = 1;\nconst b = 3;\n');
    expect(await ws.names('src')).toEqual(['a.ts']);
  });

  it('inserts newText literally, without replacement patterns like $&', async () => {
    await ws.file('a.sh', 'echo NAME\n');
    await run({ path: 'a.sh', oldText: 'NAME', newText: '$& $1 $$HOME' });
    expect(await content('a.sh')).toBe('echo $& $1 $$HOME\n');
  });

  it('deletes oldText when newText is empty', async () => {
    await ws.file('a.txt', 'keep drop keep');
    await run({ path: 'a.txt', oldText: ' drop', newText: '' });
    expect(await content('a.txt')).toBe('keep keep');
  });

  it('says oldText was not found and leaves the file unchanged', async () => {
    await ws.file('a.txt', 'hello');
    await expect(run({ path: 'a.txt', oldText: 'bye', newText: 'x' })).resolves.toEqual({
      status: 'error',
      output: 'oldText was not found in "a.txt"; read_file shows its exact content',
    });
    expect(await content('a.txt')).toBe('hello');
  });

  it('hints at CRLF line endings when a multi-line oldText is not found', async () => {
    await ws.file('win.txt', 'one\r\ntwo\r\n');
    const result = await run({ path: 'win.txt', oldText: 'one\ntwo', newText: 'x' });
    expect(result).toEqual({
      status: 'error',
      output: 'oldText was not found in "win.txt" (the file has CRLF line endings); read_file shows its exact content',
    });
  });

  it('refuses an ambiguous oldText, saying how many times it occurs, and leaves the file unchanged', async () => {
    await ws.file('a.txt', 'x = 1\nx = 1\nx = 1\n');
    await expect(run({ path: 'a.txt', oldText: 'x = 1', newText: 'x = 2' })).resolves.toEqual({
      status: 'error',
      output: 'oldText is ambiguous: it occurs 3 times in "a.txt"; include more surrounding text so that it matches exactly once',
    });
    expect(await content('a.txt')).toBe('x = 1\nx = 1\nx = 1\n');
  });

  it('counts overlapping occurrences as ambiguous', async () => {
    await ws.file('a.txt', 'aaa');
    await expect(run({ path: 'a.txt', oldText: 'aa', newText: 'b' })).resolves.toMatchObject({
      status: 'error',
      output: expect.stringContaining('occurs 2 times'),
    });
  });

  it('keeps a byte-order mark at the start of the file', async () => {
    await ws.file('bom.txt', '\uFEFFhello');
    await run({ path: 'bom.txt', oldText: 'hello', newText: 'bye' });
    expect(await readFile(join(ws.root, 'bom.txt'))).toEqual(Buffer.from('\uFEFFbye'));
  });

  it('refuses binary and invalid UTF-8 files rather than corrupting them', async () => {
    await ws.file('bin.dat', Buffer.from([0x61, 0x00, 0x62]));
    await ws.file('latin1.txt', Buffer.from([0x63, 0x61, 0x66, 0xe9]));
    await expect(run({ path: 'bin.dat', oldText: 'a', newText: 'b' })).resolves.toEqual({
      status: 'error',
      output: '"bin.dat" is a binary file (3 bytes); the file tools only handle UTF-8 text',
    });
    await expect(run({ path: 'latin1.txt', oldText: 'ca', newText: 'x' })).resolves.toEqual({
      status: 'error',
      output: '"latin1.txt" is not valid UTF-8 text; edit_file only edits UTF-8 files',
    });
  });

  it('answers a missing file or a path outside the workspace with an error result', async () => {
    await expect(run({ path: 'nope.txt', oldText: 'a', newText: 'b' })).resolves.toEqual({
      status: 'error',
      output: '"nope.txt" does not exist (list_files shows what does)',
    });
    await expect(run({ path: '../outside/a', oldText: 'a', newText: 'b' })).resolves.toEqual({
      status: 'error',
      output: 'path "../outside/a" is outside the workspace',
    });
  });

  it('answers missing, empty or no-op arguments with an error result', async () => {
    await ws.file('a.txt', 'hello');
    await expect(run({ path: 'a.txt', oldText: 'hello' })).resolves.toEqual({
      status: 'error',
      output: 'invalid arguments: missing required argument "newText" (string)',
    });
    await expect(run({ path: 'a.txt', oldText: '', newText: 'x' })).resolves.toEqual({
      status: 'error',
      output: 'oldText is empty; give the exact text to replace',
    });
    await expect(run({ path: 'a.txt', oldText: 'hello', newText: 'hello' })).resolves.toEqual({
      status: 'error',
      output: 'oldText and newText are identical; nothing would change',
    });
    await expect(run({ path: 'a.txt', old_text: 'hello', newText: 'x' })).resolves.toEqual({
      status: 'error',
      output: 'invalid arguments: unknown argument "old_text"; expected path, oldText, newText',
    });
  });
});
