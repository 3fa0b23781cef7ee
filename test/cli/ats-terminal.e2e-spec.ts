import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AtsClient } from '@agentic-task-service/client';
import { atsCommandLine, REPO_ROOT } from '../support/ats-cli';
import { secretForms, secretProbeCommand, secretProbeOutput } from '../support/secret-probe';
import type { Harness } from '../support/service-harness';
import { API_KEY, startHarness } from '../support/service-harness';
import { TmuxTerminal } from '../support/tmux-terminal';

// The real `ats` binary in a real pseudo-terminal (tmux) against the running service and the
// scripted model: what a person sees and types.

jest.setTimeout(90_000);

describe('ats in a terminal', () => {
  let h: Harness;
  let ats: AtsClient;
  let home: string;
  const terminals: TmuxTerminal[] = [];
  const env = () => ({ PATH: process.env.PATH, HOME: home, XDG_CONFIG_HOME: join(home, '.config'), ATS_URL: h.url, ATS_API_KEY: API_KEY });
  const open = async (args: string[], extraEnv: NodeJS.ProcessEnv = {}) => {
    const terminal = await TmuxTerminal.start(atsCommandLine(args), { ...env(), ...extraEnv }, REPO_ROOT);
    terminals.push(terminal);
    return terminal;
  };

  beforeAll(async () => {
    h = await startHarness();
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

  it('run --ask stops at each tool call; once, always and deny each reach the task', async () => {
    h.model.script(
      { toolCalls: [{ name: 'write_file', arguments: { path: 'downloads/once.md', content: 'approved once\n' } }] },
      { toolCalls: [{ name: 'list_files', arguments: {} }] },
      { toolCalls: [{ name: 'list_files', arguments: { path: 'downloads' } }] },
      { toolCalls: [{ name: 'write_file', arguments: { path: 'downloads/denied.md', content: 'never\n' } }] },
      { text: 'Wrote one file, listed twice, skipped the other.' },
    );
    const term = await open(['run', '--ask', 'write and list']);

    const asking = await term.waitFor('Allow write_file path=downloads/once.md content=approved once\\n?');
    expect(asking).toMatch(/Yes, once\n.*Yes, always.*\n.*No, deny/);
    await term.press('Enter'); // "Yes, once" is the first choice
    await term.waitFor('Allow list_files?');
    await term.press('Down', 'Enter'); // "Yes, always"
    // The second list_files runs under the rule without a question; the write asks.
    await term.waitFor('Allow write_file path=downloads/denied.md');
    await term.press('Down', 'Down', 'Enter'); // "No, deny"
    expect(await term.exitCode()).toBe(0);

    const screen = await term.screen();
    // The session docs/guide/cli.md shows is this screen: ATS_CLI_RECORD=<file> keeps it.
    if (process.env.ATS_CLI_RECORD) await writeFile(process.env.ATS_CLI_RECORD, `${asking}\n${screen}`);
    expect(screen).toContain('› write and list');
    expect(screen).toContain('✓ approved once');
    expect(screen).toContain('✓ always allowed');
    expect(screen).toContain('✗ denied');
    expect(screen.match(/Allow /g)).toHaveLength(3);
    expect(screen).toContain('Wrote one file, listed twice, skipped the other.');
    expect(screen).toMatch(/✔ completed\nusage: [\d,]+ tokens/);
    expect(screen).toMatch(/artifacts:\n {2}downloads\/once\.md \(14 B\)/);
    expect(screen).not.toContain('downloads/denied.md (');

    const id = /task (task_[0-9a-f]{32})/.exec(screen)![1];
    const task = await ats.tasks.get(id);
    expect(task.status).toBe('completed');
    const decisions: string[] = [];
    for await (const event of ats.tasks.stream(id, { after: 0 })) if (event.type === 'tool_decision') decisions.push(event.data.outcome);
    expect(decisions).toEqual(['proceed_once', 'proceed_always', 'cancel']);
  });

  it('Ctrl-C asks cancel or detach; detached, the task goes on and logs --follow shows every event once', async () => {
    h.model.script(
      { toolCalls: [{ name: 'write_file', arguments: { path: 'downloads/slow.md', content: 'slow\n' } }], delayMs: 1500 },
      { text: 'Finished after the detach.', delayMs: 1500 },
    );
    const run = await open(['run', 'slow work']);
    const started = await run.waitFor(/task (task_[0-9a-f]{32})/);
    const id = /task (task_[0-9a-f]{32})/.exec(started)![1];
    await run.waitFor('turn 1 started');
    await run.press('C-c');
    await run.waitFor(`Interrupted. What about ${id}?`);
    await run.press('Enter'); // "Detach" is the first choice
    expect(await run.exitCode()).toBe(130);
    const detached = await run.screen();
    expect(detached).toMatch(new RegExp(`Detached: ${id} keeps running. Follow it again with: ats logs ${id} --follow --after \\d+`));
    expect(detached).not.toContain('Finished after the detach.');
    expect((await ats.tasks.get(id)).status).not.toBe('cancelled');

    const logs = await open(['logs', id, '--follow']);
    expect(await logs.exitCode()).toBe(0);
    const screen = await logs.screen();
    const once = (text: string) => expect(screen.split(text).length - 1).toBe(1);
    once('› slow work');
    once('turn 1 started');
    once('● write_file path=downloads/slow.md');
    once('✓ success');
    once('↳ wrote downloads/slow.md (5 B)');
    once('Finished after the detach.');
    once('✔ completed');
    once('usage: ');
  });

  it('logs --follow of a task started with --ask --detach asks at its approval like run does', async () => {
    h.model.script({ toolCalls: [{ name: 'list_files', arguments: {} }] }, { text: 'listed later' });
    const started = await open(['run', 'list later', '--ask', '--detach']);
    expect(await started.exitCode()).toBe(0);
    const id = /(task_[0-9a-f]{32}) started; follow it with: ats logs task_[0-9a-f]{32} --follow/.exec(await started.screen())![1];

    const logs = await open(['logs', id, '--follow']);
    await logs.waitFor('Allow list_files?');
    await logs.press('Enter');
    expect(await logs.exitCode()).toBe(0);
    const screen = await logs.screen();
    expect(screen).toContain('✓ approved once');
    expect(screen).toContain('listed later');
    expect((await ats.tasks.get(id)).status).toBe('completed');
  });

  it('Ctrl-C, then "Cancel the task", cancels it and exits 130', async () => {
    h.model.script({ text: 'too late', delayMs: 5000 });
    const run = await open(['run', 'to be cancelled']);
    const id = /task (task_[0-9a-f]{32})/.exec(await run.waitFor(/task (task_[0-9a-f]{32})/))![1];
    await run.waitFor('turn 1 started');
    await run.press('C-c');
    await run.waitFor('Cancel the task');
    await run.press('Down', 'Enter');
    expect(await run.exitCode()).toBe(130);
    expect(await run.screen()).toContain(`${id} cancelled`);
    expect((await ats.tasks.get(id)).status).toBe('cancelled');
  });

  it('--secret without its variable asks for the value without echoing it; the task gets that value, the screen never shows it', async () => {
    const value = 'hunter2-secret-value';
    h.model.script({ toolCalls: [{ name: 'shell', arguments: { command: secretProbeCommand('DEPLOY_TOKEN') } }] }, { text: 'used it' });
    const term = await open(['run', 'use the token', '--secret', 'DEPLOY_TOKEN']);
    await term.waitFor('Value of secret DEPLOY_TOKEN');
    await term.type(value);
    await term.press('Enter');
    expect(await term.exitCode()).toBe(0);
    const screen = await term.screen();
    const id = /task (task_[0-9a-f]{32})/.exec(screen)![1];
    expect((await ats.tasks.get(id)).secretNames).toEqual(['DEPLOY_TOKEN']);
    // The command saw exactly the typed value (its digest), shown only redacted, here and in the task's events.
    const [redacted, digest] = secretProbeOutput('DEPLOY_TOKEN', value);
    expect(screen).toContain(redacted);
    expect(screen).toContain(digest);
    let output = '';
    for await (const event of ats.tasks.stream(id, { after: 0 })) if (event.type === 'tool_result') output += event.data.output;
    expect(output).toContain(redacted);
    expect(output).toContain(digest);
    expect(screen).not.toContain('hunter2');
    for (const form of secretForms(value)) expect(screen + output).not.toContain(form);
  });

  it('login asks for the URL and, without echo, the key; stores them with mode 0600', async () => {
    const term = await open(['login'], { ATS_API_KEY: undefined });
    await term.waitFor('Service URL');
    await term.press('Enter'); // ATS_URL is offered
    await term.waitFor('API key');
    await term.type(API_KEY);
    await term.press('Enter');
    expect(await term.exitCode()).toBe(0);
    const screen = await term.screen();
    expect(screen).not.toContain(API_KEY);
    const file = join(home, '.config', 'ats', 'config.json');
    expect(screen).toContain(`Logged in to ${h.url}; saved to ${file} (mode 0600)`);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(JSON.parse(await readFile(file, 'utf8'))).toEqual({ url: h.url, apiKey: API_KEY });
  });

  it('login with stdout redirected refuses to read the key from the terminal, where it would be echoed', async () => {
    const out = join(home, 'login-out.txt');
    const term = await TmuxTerminal.start(
      `${atsCommandLine(['login', '--url', h.url])} > '${out}'`,
      { ...env(), ATS_API_KEY: undefined },
      REPO_ROOT,
    );
    terminals.push(term);
    expect(await term.exitCode()).toBe(1);
    expect(await term.screen()).toContain(
      'ats: login asks for the key only when stdin and stdout are a terminal; else pipe it in or set ATS_API_KEY',
    );
  });
});
