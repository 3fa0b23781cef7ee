import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AtsClient } from '@agentic-task-service/client';
import { atsCommandLine, REPO_ROOT } from '../support/ats-cli';
import type { Harness } from '../support/service-harness';
import { API_KEY, OTHER_API_KEY, startHarness, waitFor } from '../support/service-harness';
import { TmuxTerminal } from '../support/tmux-terminal';

// `ats send --interrupt|--rollback|--reject` and `ats schedule …` (docs/guide/cli.md) run by the
// real `ats` binary in a real pseudo-terminal (tmux), against the running service and the scripted
// model: what a person sees. ats-pipe.e2e-spec.ts and ats-schedule.e2e-spec.ts run the same
// commands with pipes, as a script does.

jest.setTimeout(90_000);

const TASK_ID = /task_[0-9a-f]{32}/;
const SCHEDULE_ID = /sched_[0-9A-Za-z_-]+/;
// Every 2 seconds, the tightest cron SCHEDULE_MIN_INTERVAL_MS lets through below.
const EVERY_2S = '*/2 * * * * *';
/** An instant on the wall clock of Paris, by another road than the CLI's: Sweden writes dates as ISO does. */
const paris = (iso: string) => new Date(iso).toLocaleString('sv-SE', { timeZone: 'Europe/Paris' });

describe('ats send and ats schedule in a terminal', () => {
  let h: Harness;
  let ats: AtsClient;
  let home: string;
  const terminals: TmuxTerminal[] = [];
  const env = () => ({ PATH: process.env.PATH, HOME: home, XDG_CONFIG_HOME: join(home, '.config'), ATS_URL: h.url, ATS_API_KEY: API_KEY });
  const open = async (args: string[], extraEnv: Record<string, string> = {}) => {
    const terminal = await TmuxTerminal.start(atsCommandLine(args), { ...env(), ...extraEnv }, REPO_ROOT);
    terminals.push(terminal);
    return terminal;
  };
  /** Runs one command to its end: its exit status and the screen it left. */
  const command = async (args: string[], extraEnv: Record<string, string> = {}) => {
    const terminal = await open(args, extraEnv);
    const code = await terminal.exitCode();
    return { code, screen: await terminal.screen() };
  };
  const status = async (id: string) => (await ats.tasks.get(id)).status;

  /** `ats run` of a task whose first turn writes downloads/draft.md, then waits on a model that never answers. */
  const runningTask = async (message: string) => {
    h.model.script({ toolCalls: [{ name: 'write_file', arguments: { path: 'downloads/draft.md', content: 'draft\n' } }] }, { hang: true });
    const run = await open(['run', message]);
    const id = TASK_ID.exec(await run.waitFor(TASK_ID))![0];
    await run.waitFor('↳ wrote downloads/draft.md (6 B)');
    return { run, id };
  };

  beforeAll(async () => {
    h = await startHarness({ SCHEDULE_MIN_INTERVAL_MS: '2000' });
    ats = h.client();
    home = await mkdtemp(join(tmpdir(), 'ats-cli-home-'));
  });
  afterEach(async () => {
    await Promise.all(terminals.splice(0).map((terminal) => terminal.close()));
  });
  afterAll(async () => {
    await h.close();
    await rm(home, { recursive: true, force: true });
  });

  it('send --reject while a turn runs says why, exits 1 and leaves the turn running', async () => {
    const { run, id } = await runningTask('busy');
    const { code, screen } = await command(['send', id, 'not now', '--reject']);
    expect(code).toBe(1);
    expect(screen).toMatch(/ats: .*running.* \(CONFLICT\)\n\[exit 1\]/);
    expect(screen).not.toContain('sent, task');
    expect(await status(id)).toBe('running');
    expect(await run.screen()).not.toMatch(/✖|✔/);
    await ats.tasks.cancel(id);
  });

  it('send --interrupt stops the running turn, which ends interrupted, and the new turn runs at once', async () => {
    const { run, id } = await runningTask('first try');
    h.model.script({ text: 'Did the second thing instead.' });
    const sent = await command(['send', id, 'do this instead', '--interrupt']);
    expect(sent.code).toBe(0);
    expect(sent.screen).toMatch(new RegExp(`^msg_\\S+ sent, task running; follow it with: ats logs ${id} --follow\n`));

    // The terminal following the first turn sees it end interrupted.
    expect(await run.exitCode()).toBe(1);
    expect(await run.screen()).toMatch(/turn 1 started\n[^]*✖ cancelled \(interrupted\)\nusage: /);

    const logs = await open(['logs', id, '--follow']);
    expect(await logs.exitCode()).toBe(0);
    const screen = await logs.screen();
    expect(screen).toMatch(
      /› first try\nturn 1 started\n[^]*✖ cancelled \(interrupted\)\n[^]*› do this instead\nturn 2 started\nDid the second thing instead\.\n✔ completed\n/,
    );
    expect(screen).not.toContain('turn undone');
  });

  it('send --rollback stops the running turn and undoes it: the file it wrote is gone', async () => {
    const { run, id } = await runningTask('write a draft');
    const before = await command(['files', id]);
    expect(before.screen).toMatch(/ {2}downloads\/draft\.md\n/);

    h.model.script({ text: 'As if the draft was never asked for.' });
    const sent = await command(['send', id, 'forget the draft', '--rollback']);
    expect(sent.code).toBe(0);
    expect(sent.screen).toMatch(/^msg_\S+ sent, task running/);
    expect(await run.exitCode()).toBe(1);

    const logs = await open(['logs', id, '--follow']);
    expect(await logs.exitCode()).toBe(0);
    expect(await logs.screen()).toMatch(
      /✖ cancelled \(interrupted\)\n[^]*turn undone: events \d+ to \d+ left out, workspace as before it\n[^]*As if the draft was never asked for\.\n✔ completed\n/,
    );
    const after = await command(['files', id]);
    expect(after.code).toBe(0);
    expect(after.screen).toBe(`${id} has no files now\n[exit 0]\n`);
  });

  it("schedule ls shows the next run on the wall clock of the schedule's zone, the one named beside it", async () => {
    const created = await command(['schedule', 'create', '0 9 * * *', 'morning', '--tz', 'Europe/Paris']);
    const id = SCHEDULE_ID.exec(created.screen)![0];
    const ls = await command(['schedule', 'ls']);
    expect(ls.screen).toMatch(new RegExp(`^${id} {2}0 9 \\* \\* \\* Europe/Paris {2}next \\d{4}-\\d\\d-\\d\\d 09:00:00 {2}morning$`, 'm'));
    await command(['schedule', 'rm', id]);
  });

  it("schedule create --max-cost --max-tokens sets each run's budgets, which show lists under the schedule", async () => {
    const created = await command(['schedule', 'create', '0 9 * * *', 'budgeted report', '--max-cost', '0.5', '--max-tokens', '5000']);
    expect(created.code).toBe(0);
    const id = SCHEDULE_ID.exec(created.screen)![0];
    expect((await ats.schedules.get(id)).task).toMatchObject({ maxCostUsd: 0.5, maxTokens: 5000 });

    const shown = await command(['schedule', 'show', id]);
    expect(shown.code).toBe(0);
    expect(shown.screen).toMatch(
      new RegExp(
        `^${id} {2}0 9 \\* \\* \\* UTC {2}next [^\\n]+ {2}budgeted report\n {2}budget of each run: 5000 tokens, \\$0\\.5\n\\[exit 0\\]\n$`,
      ),
    );
    // Without budgets, no such line.
    const plain = await command(['schedule', 'create', '0 9 * * *', 'plain report']);
    const plainId = SCHEDULE_ID.exec(plain.screen)![0];
    expect((await ats.schedules.get(plainId)).task).toMatchObject({ maxCostUsd: null, maxTokens: null });
    expect((await command(['schedule', 'show', plainId])).screen).not.toContain('budget');

    const refused = await command(['schedule', 'create', '0 9 * * *', 'never created', '--max-cost', '0']);
    expect(refused.code).toBe(1);
    expect(refused.screen).toContain("error: option '--max-cost <usd>' argument '0' is invalid. expected an amount in USD above 0");
    const messages: string[] = [];
    for await (const schedule of ats.schedules.list()) messages.push(schedule.task.message);
    expect(messages).toContain('plain report');
    expect(messages).not.toContain('never created');
    for (const created of [id, plainId]) await command(['schedule', 'rm', created]);
  });

  // Last: the schedule's runs are tasks that take the scripted model's replies.
  it('schedule create, ls, show, runs, pause, resume and rm, each one readable line', async () => {
    const created = await command(['schedule', 'create', EVERY_2S, 'tick report', '--tz', 'Europe/Paris']);
    expect(created.code).toBe(0);
    const line = new RegExp(
      `^(${SCHEDULE_ID.source}) {2}\\*/2 \\* \\* \\* \\* \\* Europe/Paris {2}next \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d {2}tick report$`,
      'm',
    );
    expect(created.screen).toMatch(line);
    expect(created.screen).not.toContain('{');
    const id = line.exec(created.screen)![1];

    const ls = await command(['schedule', 'ls']);
    expect(ls.screen).toMatch(line);
    expect(ls.screen).not.toContain('{');

    // Fired at least once: show lists each run with the task it started.
    await waitFor(async () => ((await ats.schedules.runsPage(id, { limit: 1 })).runs.length > 0 ? true : undefined), 10_000, 'a run');
    const shown = await command(['schedule', 'show', id]);
    expect(shown.code).toBe(0);
    expect(shown.screen).toMatch(line);
    expect(shown.screen).toMatch(new RegExp(`^ {2}\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d {2}started {2}${TASK_ID.source}$`, 'm'));

    // Two runs or more, then paused so that they stay put while the CLI and the API are compared.
    await waitFor(async () => ((await ats.schedules.runsPage(id, { limit: 2 })).runs.length > 1 ? true : undefined), 10_000, 'two runs');
    const paused = await command(['schedule', 'pause', id]);
    expect(paused.screen).toMatch(new RegExp(`^${id} {2}\\*/2 \\* \\* \\* \\* \\* Europe/Paris {2}paused {2}tick report$`, 'm'));

    // schedule runs: every run the API lists, newest first, on the wall clock of Paris, with the task each started.
    const { runs } = await ats.schedules.runsPage(id, { limit: 20 });
    expect(runs.length).toBeGreaterThan(1);
    expect(runs.some((run) => run.outcome === 'started')).toBe(true);
    const runLines = runs.map(
      (run) => `${paris(run.dueAt)}  ${run.outcome.padEnd(7)}  ${run.outcome === 'started' ? run.taskId : run.reason}`,
    );
    const title = `runs of ${id}, newest first; due times in Europe/Paris`;
    const listed = await command(['schedule', 'runs', id]);
    expect(listed).toEqual({ code: 0, screen: [title, ...runLines, '[exit 0]', ''].join('\n') });
    const one = await command(['schedule', 'runs', id, '--limit', '1']);
    expect(one).toEqual({
      code: 0,
      screen: [title, runLines[0], 'older runs not shown: --limit <n> for more, --all for every one', '[exit 0]', ''].join('\n'),
    });
    const json = await command(['schedule', 'runs', id, '--limit', '2', '--json']);
    expect(json.code).toBe(0);
    expect(
      json.screen
        .trimEnd()
        .split('\n')
        .slice(0, -1)
        .map((line) => JSON.parse(line) as unknown),
    ).toEqual(runs.slice(0, 2));
    const otherTenant = await command(['schedule', 'runs', id], { ATS_API_KEY: OTHER_API_KEY });
    expect(otherTenant.code).toBe(1);
    expect(otherTenant.screen).toMatch(/^ats: .* \(NOT_FOUND\)\n\[exit 1\]\n$/);

    expect((await command(['schedule', 'ls'])).screen).toMatch(new RegExp(`^${id} .* {2}paused {2}tick report$`, 'm'));
    const resumed = await command(['schedule', 'resume', id]);
    expect(resumed.screen).toMatch(line);
    expect((await command(['schedule', 'ls'])).screen).toMatch(line);

    const removed = await command(['schedule', 'rm', id]);
    expect(removed).toEqual({ code: 0, screen: `${id} deleted\n[exit 0]\n` });
    const after = await command(['schedule', 'ls']);
    expect(after.screen).not.toContain(id);
    expect(after.screen).toContain('no schedules yet');
    for (const sub of ['show', 'runs']) {
      const gone = await command(['schedule', sub, id]);
      expect(gone.code).toBe(1);
      expect(gone.screen).toMatch(/^ats: .* \(NOT_FOUND\)\n\[exit 1\]\n$/);
    }
  });
});
