import type { AtsClient } from '@agentic-task-service/client';
import { CommanderError } from 'commander';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CliContext } from '../src/context';
import { buildProgram } from '../src/program';
import { Terminal } from '../src/terminal';

/** `ats` in-process against a stand-in client: what `run` creates and what `send` sends. */
function cli() {
  const stream = { write: () => true } as unknown as NodeJS.WriteStream;
  const create = jest.fn(async () => ({ id: 'task_1', status: 'pending' }));
  const sendMessage = jest.fn(async () => ({ id: 'task_1', messageId: 'msg_1', status: 'running' }));
  const client = { tasks: { create, sendMessage } } as unknown as AtsClient;
  const ctx: CliContext = { term: new Terminal(false, stream, stream), client: async () => client };
  let code: number | undefined;
  const run = async (...args: string[]) => {
    const program = buildProgram(ctx, (status) => (code = status));
    // Usage errors throw instead of exiting the test run (subcommands do not inherit this).
    for (const command of [program, ...program.commands]) command.exitOverride().configureOutput({ writeErr: () => undefined });
    await program.parseAsync(['node', 'ats', ...args]);
    return code;
  };
  return { run, create, sendMessage };
}

describe('ats run and ats send budgets', () => {
  it('run --max-tokens and --max-cost become the new task budgets; without them none is sent', async () => {
    const c = cli();
    expect(await c.run('run', 'go', '--max-cost', '0.5', '--max-tokens', '5000', '--detach')).toBe(0);
    expect(c.create).toHaveBeenCalledWith({ message: 'go', autoExecute: true, maxTokens: 5000, maxCostUsd: 0.5 });
    expect(await c.run('run', 'go', '--detach')).toBe(0);
    expect(c.create).toHaveBeenLastCalledWith({ message: 'go', autoExecute: true });
  });

  it('run sends the budgets with the files too (the client then sends multipart)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ats-budget-'));
    try {
      await writeFile(join(dir, 'data.csv'), 'a,b\n');
      const c = cli();
      expect(await c.run('run', 'go', '--file', join(dir, 'data.csv'), '--max-tokens', '5000', '--max-cost', '2.5', '--detach')).toBe(0);
      expect(c.create).toHaveBeenCalledWith({
        message: 'go',
        autoExecute: true,
        maxTokens: 5000,
        maxCostUsd: 2.5,
        files: [{ name: 'data.csv', content: Buffer.from('a,b\n') }],
      });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('send --max-tokens and --max-cost set the budgets from now on; without them none is sent', async () => {
    const c = cli();
    expect(await c.run('send', 'task_1', 'more', '--max-tokens', '9000')).toBe(0);
    expect(c.sendMessage).toHaveBeenCalledWith('task_1', { message: 'more', maxTokens: 9000 });
    expect(await c.run('send', 'task_1', 'now', '--interrupt', '--max-cost', '1.5')).toBe(0);
    expect(c.sendMessage).toHaveBeenLastCalledWith('task_1', { message: 'now', ifRunning: 'interrupt', maxCostUsd: 1.5 });
    expect(await c.run('send', 'task_1', 'plain')).toBe(0);
    expect(c.sendMessage).toHaveBeenLastCalledWith('task_1', { message: 'plain' });
  });

  describe.each([
    ['run', ['run', 'go', '--detach']],
    ['send', ['send', 'task_1', 'more']],
  ])('%s', (_name, command) => {
    it.each([
      ['--max-cost', '0', 'expected an amount in USD above 0'],
      ['--max-cost', 'abc', 'expected an amount in USD above 0'],
      ['--max-cost', '-1', 'expected an amount in USD above 0'],
      ['--max-cost', '1e3', 'expected an amount in USD above 0'],
      ['--max-tokens', '0', 'expected a number of tokens, a whole number from 1'],
      ['--max-tokens', '2.5', 'expected a number of tokens, a whole number from 1'],
      ['--max-tokens', 'many', 'expected a number of tokens, a whole number from 1'],
    ])('refuses %s %j with a usage error (exit 1) before any request', async (flag, value, why) => {
      const c = cli();
      const failure = c.run(...command, flag, value);
      await expect(failure).rejects.toThrow(CommanderError);
      await expect(failure).rejects.toMatchObject({
        exitCode: 1,
        message: expect.stringContaining(
          `option '${flag} <${flag === '--max-cost' ? 'usd' : 'n'}>' argument '${value}' is invalid. ${why}`,
        ),
      });
      expect(c.create).not.toHaveBeenCalled();
      expect(c.sendMessage).not.toHaveBeenCalled();
    });
  });
});
