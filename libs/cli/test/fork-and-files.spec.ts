/* eslint-disable no-control-regex -- these tests look for raw control characters in the output */
import type { AtsClient, WorkspaceFile } from '@agentic-task-service/client';
import { InvalidArgumentError } from 'commander';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseEventId } from '../src/arguments';
import type { CliContext } from '../src/context';
import { CliExit } from '../src/exit-codes';
import { fileLine } from '../src/file-listing';
import { buildProgram } from '../src/program';
import { Terminal } from '../src/terminal';

const SHA = 'a'.repeat(64);

/** `ats` in-process with a stand-in client: what the commands ask of it and what they print. */
function cli(files: WorkspaceFile[] = []) {
  let out = '';
  const stream = { write: (text: string) => ((out += text), true) } as unknown as NodeJS.WriteStream;
  const fork = jest.fn(async (taskId: string, request: { afterEventId: number }) => ({
    id: 'task_fork',
    status: 'completed' as const,
    forkedFrom: { taskId, eventId: request.afterEventId },
  }));
  const list = jest.fn(async (_taskId: string, options: { cursor?: string }) =>
    options.cursor === undefined
      ? { at: 3, files: files.slice(0, 1), nextCursor: 'next' }
      : { at: 3, files: files.slice(1), nextCursor: null },
  );
  const download = jest.fn(async () => ({ body: new TextEncoder().encode('bytes of then'), fileName: 'x', contentType: 'x' }));
  const client = { tasks: { fork }, files: { list, listAll: undefined as unknown, download } };
  // listAll as the real client pages: through list.
  client.files.listAll = async function* (taskId: string, options: object) {
    let cursor: string | undefined;
    do {
      const page = await list(taskId, { ...options, cursor });
      yield* page.files;
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
  };
  const ctx: CliContext = { term: new Terminal(false, stream, stream), client: async () => client as unknown as AtsClient };
  let code: number | undefined;
  const run = async (...args: string[]) => {
    const program = buildProgram(ctx, (status) => (code = status));
    // Usage errors throw instead of exiting the test run (subcommands do not inherit this).
    for (const command of [program, ...program.commands]) command.exitOverride().configureOutput({ writeErr: () => undefined });
    await program.parseAsync(['node', 'ats', ...args]);
    return code;
  };
  return { run, fork, list, download, out: () => out };
}

describe('ats fork', () => {
  it('sends --after, --message and the auto-execute choice; prints the fork id and status', async () => {
    const c = cli();
    expect(await c.run('fork', 'task_src', '--after', '12', '--message', 'go on', '--no-auto-execute')).toBe(0);
    expect(c.fork).toHaveBeenCalledWith('task_src', { afterEventId: 12, message: 'go on', autoExecute: false });
    expect(c.out()).toBe('task_fork completed (forked from task_src after event 12)\n');
    await c.run('fork', 'task_src', '--after', '3', '--auto-execute');
    expect(c.fork).toHaveBeenLastCalledWith('task_src', { afterEventId: 3, autoExecute: true });
    await c.run('fork', 'task_src', '--after', '3');
    expect(c.fork).toHaveBeenLastCalledWith('task_src', { afterEventId: 3 });
  });

  it('needs --after, an event id from 1', async () => {
    await expect(cli().run('fork', 'task_src')).rejects.toThrow(/--after <n>/);
    for (const bad of ['0', '-1', '1.5', 'x']) expect(() => parseEventId(bad)).toThrow(InvalidArgumentError);
    expect(parseEventId('7')).toBe(7);
  });
});

describe('ats files', () => {
  const files = [
    { path: 'a.txt', size: 3, sha256: SHA },
    { path: 'evil\u001b]0;owned\u0007.txt', size: 2048, sha256: SHA },
  ];

  it('prints sha256, size and path per file, through every page, as of --at', async () => {
    const c = cli(files);
    expect(await c.run('files', 'task_1', '--at', '3')).toBe(0);
    expect(c.list).toHaveBeenCalledTimes(2);
    expect(c.list).toHaveBeenNthCalledWith(2, 'task_1', { at: 3, cursor: 'next' });
    expect(c.out().split('\n')).toEqual([`${SHA}         3 B  a.txt`, `${SHA}     2.0 KiB  evil\\x1b]0;owned\\x07.txt`, '']);
    expect(c.out()).not.toMatch(/\u001b|\u0007/);
  });

  it('formats one line with the path last and its control characters escaped', () => {
    expect(fileLine({ path: 'd/\u202eb.txt', size: 10, sha256: SHA })).toBe(`${SHA}        10 B  d/\\u202eb.txt`);
  });

  describe('--get', () => {
    let dir: string;
    const cwd = process.cwd();
    beforeEach(async () => {
      dir = await mkdtemp(join(tmpdir(), 'ats-files-get-'));
      process.chdir(dir);
    });
    afterEach(async () => {
      process.chdir(cwd);
      await rm(dir, { recursive: true, force: true });
    });

    it('writes the file as of --at under the current folder, and never overwrites', async () => {
      const c = cli();
      expect(await c.run('files', 'task_1', '--at', '3', '--get', 'src/a.txt')).toBe(0);
      expect(c.download).toHaveBeenCalledWith('task_1', 'src/a.txt', { at: 3 });
      expect(await readFile(join(dir, 'src/a.txt'), 'utf8')).toBe('bytes of then');
      expect(c.out()).toBe('src/a.txt after event 3 → src/a.txt (13 B)\n');

      await writeFile(join(dir, 'mine.txt'), 'keep');
      await expect(c.run('files', 'task_1', '--get', 'src/a.txt', '-o', 'mine.txt')).rejects.toThrow(/mine\.txt exists; not overwritten/);
      expect(await readFile(join(dir, 'mine.txt'), 'utf8')).toBe('keep');
    });

    it.each(['../escape.txt', '/etc/passwd', 'a/\u001b[2J.txt'])('refuses %j before asking the service', async (path) => {
      const c = cli();
      await expect(c.run('files', 'task_1', '--get', path)).rejects.toThrow(CliExit);
      expect(c.download).not.toHaveBeenCalled();
    });
  });
});
