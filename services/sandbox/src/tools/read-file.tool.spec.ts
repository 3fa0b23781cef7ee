import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { TempWorkspace } from '@app/common/testing/temp-workspace';
import { createTempWorkspace } from '@app/common/testing/temp-workspace';
import { READ_FILE_MAX_BYTES, readFileTool } from './read-file.tool';

describe('read_file', () => {
  let ws: TempWorkspace;
  beforeEach(async () => (ws = await createTempWorkspace()));
  afterEach(() => ws.cleanup());

  const run = (args: Record<string, unknown>) => readFileTool.execute(args, { workspaceRoot: ws.root });
  const marker = (size: number) => `\n[truncated: file is ${size} bytes, showing first ${READ_FILE_MAX_BYTES}]`;

  it('returns the UTF-8 text of a file', async () => {
    await ws.file('notes/a.md', '# Título\nline 2\n');
    await expect(run({ path: 'notes/a.md' })).resolves.toEqual({ status: 'success', output: '# Título\nline 2\n' });
  });

  it('returns a file of exactly the bound whole, without a marker', async () => {
    await ws.file('big.txt', 'a'.repeat(READ_FILE_MAX_BYTES));
    expect((await run({ path: 'big.txt' })).output).toBe('a'.repeat(READ_FILE_MAX_BYTES));
  });

  it('cuts a larger file at the bound and marks the cut with the real size', async () => {
    await ws.file('big.txt', 'a'.repeat(READ_FILE_MAX_BYTES) + 'tail');
    await expect(run({ path: 'big.txt' })).resolves.toEqual({
      status: 'success',
      output: 'a'.repeat(READ_FILE_MAX_BYTES) + marker(READ_FILE_MAX_BYTES + 4),
    });
  });

  it('drops a multi-byte character that the bound cuts in half instead of mangling it', async () => {
    await ws.file('big.txt', 'a'.repeat(READ_FILE_MAX_BYTES - 1) + 'é');
    expect((await run({ path: 'big.txt' })).output).toBe('a'.repeat(READ_FILE_MAX_BYTES - 1) + marker(READ_FILE_MAX_BYTES + 1));
  });

  it('refuses a binary file, naming its size', async () => {
    await ws.file('logo.png', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x01]));
    await expect(run({ path: 'logo.png' })).resolves.toEqual({
      status: 'error',
      output: '"logo.png" is a binary file (6 bytes); the file tools only handle UTF-8 text',
    });
  });

  it('answers a missing file or a directory with an error result', async () => {
    await mkdir(join(ws.root, 'src'));
    await expect(run({ path: 'missing.txt' })).resolves.toEqual({
      status: 'error',
      output: '"missing.txt" does not exist (list_files shows what does)',
    });
    await expect(run({ path: 'src' })).resolves.toEqual({
      status: 'error',
      output: '"src" is a directory; use list_files to see its contents',
    });
  });

  it('refuses paths that leave the workspace, through ".." or a symlink', async () => {
    await ws.link('passwd', '/etc/passwd');
    await expect(run({ path: '../outside/x' })).resolves.toMatchObject({
      status: 'error',
      output: 'path "../outside/x" is outside the workspace',
    });
    await expect(run({ path: 'passwd' })).resolves.toMatchObject({
      status: 'error',
      output: expect.stringContaining('leads outside the workspace'),
    });
    await expect(run({ path: '/etc/passwd' })).resolves.toMatchObject({ status: 'error', output: expect.stringContaining('is absolute') });
  });

  it('answers missing or ill-typed arguments with an error result', async () => {
    await expect(run({})).resolves.toEqual({ status: 'error', output: 'invalid arguments: missing required argument "path" (string)' });
    await expect(run({ path: ['a'] })).resolves.toEqual({
      status: 'error',
      output: 'invalid arguments: argument "path" must be a string, got an array',
    });
    await expect(run({ path: '' })).resolves.toEqual({ status: 'error', output: 'path "" is empty; name a file' });
  });
});
