import type { AtsClient, ScheduleRun } from '@agentic-task-service/client';
import pc from 'picocolors';
import { ALL_RUNS_BOUND } from '../src/commands/schedule.command';
import type { CliContext } from '../src/context';
import { buildProgram } from '../src/program';
import { runLine } from '../src/schedule-listing';
import { Terminal } from '../src/terminal';

const plain = pc.createColors(false);
const TASK = `task_${'0'.repeat(32)}`;

/** Run n of a schedule that started a task every minute, newest first from 2026-12-01 09:00 Paris. */
const nthRun = (n: number): ScheduleRun => ({
  dueAt: new Date(Date.parse('2026-12-01T08:00:00.000Z') - n * 60_000).toISOString(),
  taskId: `task_${String(n).padStart(32, '0')}`,
  outcome: 'started',
});

/** `ats` in-process against a stand-in client serving `total` runs in pages, as the API does (nextCursor null on the last). */
function cli(total: number) {
  let out = '';
  let err = '';
  const stdout = { write: (text: string) => ((out += text), true) } as unknown as NodeJS.WriteStream;
  const stderr = { write: (text: string) => ((err += text), true) } as unknown as NodeJS.WriteStream;
  const get = jest.fn(async (id: string) => ({ id, timezone: 'Europe/Paris' }));
  const runsPage = jest.fn(async (_id: string, options: { limit: number; cursor?: string }) => {
    const from = options.cursor === undefined ? 0 : Number(options.cursor);
    const to = Math.min(total, from + options.limit);
    return { runs: Array.from({ length: to - from }, (_, i) => nthRun(from + i)), nextCursor: to < total ? String(to) : null };
  });
  const client = { schedules: { get, runsPage } } as unknown as AtsClient;
  const ctx: CliContext = { term: new Terminal(false, stdout, stderr), client: async () => client };
  let code: number | undefined;
  const run = async (...args: string[]) => {
    const program = buildProgram(ctx, (status) => (code = status));
    // Usage errors throw instead of exiting the test run (subcommands do not inherit this).
    const commands = [program, ...program.commands, ...program.commands.flatMap((command) => command.commands)];
    for (const command of commands) command.exitOverride().configureOutput({ writeErr: () => undefined });
    await program.parseAsync(['node', 'ats', 'schedule', 'runs', 'sched_1', ...args]);
    return code;
  };
  return { run, runsPage, out: () => out, err: () => err };
}

describe('schedule run lines', () => {
  it('line up the outcome column; a started run shows its task, a skipped or failed one why (a failed run names no task)', () => {
    const lines = [
      runLine({ dueAt: '2026-12-01T08:00:00.000Z', outcome: 'started', taskId: TASK }, 'Europe/Paris', plain),
      runLine({ dueAt: '2026-12-01T07:00:00.000Z', outcome: 'skipped', reason: 'the previous run still runs' }, 'Europe/Paris', plain),
      runLine({ dueAt: '2026-12-01T06:00:00.000Z', outcome: 'failed', taskId: TASK, reason: 'RATE_LIMITED' }, 'Europe/Paris', plain),
    ];
    expect(lines).toEqual([
      `2026-12-01 09:00:00  started  ${TASK}`,
      '2026-12-01 08:00:00  skipped  the previous run still runs',
      '2026-12-01 07:00:00  failed   RATE_LIMITED',
    ]);
  });

  it('escape what the service sent: a reason cannot drive the terminal or break the line', () => {
    const line = runLine({ dueAt: '2026-12-01T08:00:00.000Z', outcome: 'failed', reason: 'boom\x1b[2J\nnext' }, 'UTC', plain);
    expect(line).toBe('2026-12-01 08:00:00  failed   boom\\x1b[2J\\nnext');
  });
});

describe('ats schedule runs', () => {
  it('reads page after page up to --limit, newest first, and says older runs remain', async () => {
    const c = cli(5);
    expect(await c.run('--limit', '3')).toBe(0);
    expect(c.out()).toBe(
      [
        'runs of sched_1, newest first; due times in Europe/Paris',
        `2026-12-01 09:00:00  started  task_${'0'.repeat(32)}`,
        `2026-12-01 08:59:00  started  task_${'0'.repeat(31)}1`,
        `2026-12-01 08:58:00  started  task_${'0'.repeat(31)}2`,
        'older runs not shown: --limit <n> for more, --all for every one',
        '',
      ].join('\n'),
    );
    expect(c.runsPage.mock.calls.map(([, options]) => options)).toEqual([{ limit: 3 }]);
  });

  it('asks pages of at most 100 and follows the cursor; no note once every run is shown', async () => {
    const c = cli(150);
    expect(await c.run('--limit', '200')).toBe(0);
    expect(c.runsPage.mock.calls.map(([, options]) => options)).toEqual([{ limit: 100 }, { limit: 100, cursor: '100' }]);
    const lines = c.out().trimEnd().split('\n');
    expect(lines).toHaveLength(151);
    expect(lines[150]).toBe(`2026-12-01 06:31:00  started  task_${'0'.repeat(29)}149`);
  });

  it('--limit takes a whole number from 1, and not beside --all', async () => {
    const c = cli(5);
    await expect(c.run('--limit', '0')).rejects.toThrow('expected a whole number from 1');
    await expect(c.run('--limit', '2x')).rejects.toThrow('expected a whole number from 1');
    await expect(c.run('--all', '--limit', '3')).rejects.toThrow("option '--all' cannot be used with option '--limit <n>'");
    expect(c.runsPage).not.toHaveBeenCalled();
  });

  it('says so when the schedule has no runs yet', async () => {
    const c = cli(0);
    expect(await c.run()).toBe(0);
    expect(c.out()).toBe('sched_1 has no runs yet\n');
  });

  it('--all stops at its bound and says so', async () => {
    const c = cli(ALL_RUNS_BOUND + 1);
    expect(await c.run('--all')).toBe(0);
    const lines = c.out().trimEnd().split('\n');
    expect(lines).toHaveLength(ALL_RUNS_BOUND + 2);
    expect(lines[ALL_RUNS_BOUND + 1]).toBe(`stopped after the ${ALL_RUNS_BOUND} newest runs: older ones are not shown`);
    expect(c.runsPage).toHaveBeenCalledTimes(ALL_RUNS_BOUND / 100);
  });

  it('--all within the bound shows every run and no note', async () => {
    const c = cli(ALL_RUNS_BOUND);
    expect(await c.run('--all')).toBe(0);
    expect(c.out().trimEnd().split('\n')).toHaveLength(ALL_RUNS_BOUND + 1);
    expect(c.out()).not.toContain('stopped');
  });

  it('--json prints each run as the API gave it, one per line, and the bound of --all on stderr', async () => {
    const c = cli(ALL_RUNS_BOUND + 1);
    expect(await c.run('--all', '--json')).toBe(0);
    const lines = c.out().trimEnd().split('\n');
    expect(lines).toHaveLength(ALL_RUNS_BOUND);
    expect(JSON.parse(lines[1])).toEqual(nthRun(1));
    expect(c.err()).toBe(`ats: stopped after the ${ALL_RUNS_BOUND} newest runs: older ones are not shown\n`);
    const limited = cli(5);
    await limited.run('--json', '--limit', '2');
    expect(limited.out()).toBe(`${JSON.stringify(nthRun(0))}\n${JSON.stringify(nthRun(1))}\n`);
  });
});
