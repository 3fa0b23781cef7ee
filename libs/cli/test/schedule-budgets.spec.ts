import type { AtsClient, Schedule } from '@agentic-task-service/client';
import { CommanderError } from 'commander';
import { parseMaxCostUsd, parseMaxTokens } from '../src/arguments';
import type { CliContext } from '../src/context';
import { buildProgram } from '../src/program';
import { Terminal } from '../src/terminal';

const schedule = (task: Partial<Schedule['task']> = {}): Schedule =>
  ({
    id: 'sched_1',
    cron: '0 9 * * *',
    timezone: 'UTC',
    task: { message: 'report', maxTokens: null, maxCostUsd: null, ...task },
    target: null,
    paused: true,
    nextRunAt: null,
  }) as unknown as Schedule;

/** `ats` in-process against a stand-in client: what `schedule create` sends and what `schedule show` prints. */
function cli(shown: Schedule = schedule()) {
  let out = '';
  const stream = { write: (text: string) => ((out += text), true) } as unknown as NodeJS.WriteStream;
  const create = jest.fn(async (request: { task: Partial<Schedule['task']> }) => schedule(request.task));
  const get = jest.fn(async () => shown);
  const runsPage = jest.fn(async () => ({ runs: [], nextCursor: null }));
  const client = { schedules: { create, get, runsPage } } as unknown as AtsClient;
  const ctx: CliContext = { term: new Terminal(false, stream, stream), client: async () => client };
  let code: number | undefined;
  const run = async (...args: string[]) => {
    const program = buildProgram(ctx, (status) => (code = status));
    // Usage errors throw instead of exiting the test run (subcommands do not inherit this).
    const commands = [program, ...program.commands, ...program.commands.flatMap((command) => command.commands)];
    for (const command of commands) command.exitOverride().configureOutput({ writeErr: () => undefined });
    await program.parseAsync(['node', 'ats', 'schedule', ...args]);
    return code;
  };
  return { run, create, out: () => out };
}

describe('ats schedule budgets', () => {
  it('--max-tokens and --max-cost become the task budgets of each run', async () => {
    const c = cli();
    expect(await c.run('create', '0 9 * * *', 'report', '--max-cost', '0.5', '--max-tokens', '5000')).toBe(0);
    expect(c.create).toHaveBeenCalledWith({ cron: '0 9 * * *', task: { message: 'report', maxTokens: 5000, maxCostUsd: 0.5 } });
    await c.run('create', '0 9 * * *', 'report');
    expect(c.create).toHaveBeenLastCalledWith({ cron: '0 9 * * *', task: { message: 'report' } });
  });

  it.each([
    ['--max-cost', '0', 'expected an amount in USD above 0'],
    ['--max-cost', 'abc', 'expected an amount in USD above 0'],
    ['--max-cost', '-1', 'expected an amount in USD above 0'],
    ['--max-cost', '1e3', 'expected an amount in USD above 0'],
    ['--max-tokens', '0', 'expected a number of tokens, a whole number from 1'],
    ['--max-tokens', '2.5', 'expected a number of tokens, a whole number from 1'],
    ['--max-tokens', 'many', 'expected a number of tokens, a whole number from 1'],
  ])('refuses %s %j with a usage error (exit 1), and creates nothing', async (flag, value, why) => {
    const c = cli();
    const failure = c.run('create', '0 9 * * *', 'report', flag, value);
    await expect(failure).rejects.toThrow(CommanderError);
    await expect(failure).rejects.toMatchObject({
      exitCode: 1,
      message: expect.stringContaining(`option '${flag} <${flag === '--max-cost' ? 'usd' : 'n'}>' argument '${value}' is invalid. ${why}`),
    });
    expect(c.create).not.toHaveBeenCalled();
  });

  it('takes an amount in digits, with an optional decimal point', () => {
    expect([parseMaxCostUsd('2.5'), parseMaxCostUsd('.25'), parseMaxCostUsd('3'), parseMaxCostUsd('0.01')]).toEqual([2.5, 0.25, 3, 0.01]);
    expect(parseMaxTokens('200000')).toBe(200000);
  });

  it('show adds a line of the budgets of each run when one is set, and none otherwise', async () => {
    const both = cli(schedule({ maxTokens: 5000, maxCostUsd: 0.5 }));
    await both.run('show', 'sched_1');
    expect(both.out().split('\n').slice(1)).toEqual(['  budget of each run: 5000 tokens, $0.5', '']);
    const cost = cli(schedule({ maxCostUsd: 2 }));
    await cost.run('show', 'sched_1');
    expect(cost.out()).toContain('\n  budget of each run: $2\n');
    const none = cli();
    await none.run('show', 'sched_1');
    expect(none.out().split('\n')).toHaveLength(2);
    expect(none.out()).not.toContain('budget');
  });
});
