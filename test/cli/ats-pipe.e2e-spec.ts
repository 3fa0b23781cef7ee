/* eslint-disable no-control-regex -- these tests look for raw control characters in the output */
import type { Server } from 'node:http';
import { createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AtsClient } from '@agentic-task-service/client';
import { runAts, startAts } from '../support/ats-cli';
import { secretForms, secretProbeCommand, secretProbeOutput } from '../support/secret-probe';
import type { Harness } from '../support/service-harness';
import { API_KEY, startHarness, waitFor } from '../support/service-harness';

// The real `ats` binary with pipes instead of a terminal, as a script or CI runs it: no colour,
// no spinner, no prompt; --json prints JSON lines; a pending approval ends with exit 3.

jest.setTimeout(90_000);

describe('ats in a pipe', () => {
  let h: Harness;
  let ats: AtsClient;
  let home: string;
  const env = (extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv => ({
    PATH: process.env.PATH,
    HOME: home,
    XDG_CONFIG_HOME: join(home, '.config'),
    ATS_URL: h.url,
    ATS_API_KEY: API_KEY,
    ...extra,
  });
  const jsonLines = (stdout: string) =>
    stdout
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line));

  beforeAll(async () => {
    h = await startHarness();
    ats = h.client();
    home = await mkdtemp(join(tmpdir(), 'ats-cli-home-'));
  });
  afterAll(async () => {
    await h.close();
    await rm(home, { recursive: true, force: true });
  });

  it('run --json prints every event once as a JSON line, in order, and exits 0 when completed', async () => {
    h.model.script({ toolCalls: [{ name: 'write_file', arguments: { path: 'downloads/a.txt', content: 'a\n' } }] }, { text: 'wrote a' });
    const { code, stdout, stderr } = await runAts(['run', 'write a', '--json'], env());
    expect(code).toBe(0);
    const events = jsonLines(stdout);
    expect(events.map((e) => e.type)).toEqual([
      'message',
      'status',
      'usage',
      'tool_call',
      'tool_started',
      'tool_result',
      'artifact',
      'usage',
      'content',
      'done',
    ]);
    expect(events.map((e) => e.id)).toEqual(events.map((_, i) => i + 1));
    expect(events.at(-1)).toMatchObject({ type: 'done', data: { status: 'completed' } });
    const id = /task (task_[0-9a-f]{32})/.exec(stderr)![1];
    expect((await ats.tasks.get(id)).lastEventId).toBe(events.length);
  });

  it('run --ask without a terminal stops at the approval with exit 3 and says how to decide; approve and logs --follow finish it', async () => {
    h.model.script({ toolCalls: [{ name: 'list_files', arguments: {} }] }, { text: 'listed' });
    const stopped = await runAts(['run', 'list please', '--ask'], env());
    expect(stopped.code).toBe(3);
    const [, id, callId] = /ats approve (task_[0-9a-f]{32}) (call_\S+) once\|always\|deny/.exec(stopped.stderr)!;
    expect(stopped.stdout).toContain('● list_files (awaiting approval)');
    expect(stopped.stdout).not.toMatch(/\u001b/);
    expect((await ats.tasks.get(id)).status).toBe('awaiting_approval');

    const approved = await runAts(['approve', id, callId, 'once'], env());
    expect(approved).toMatchObject({ code: 0, stdout: `${callId} proceed_once (approved)\n` });
    const followed = await runAts(['logs', id, '--follow', '--json'], env());
    expect(followed.code).toBe(0);
    const events = jsonLines(followed.stdout);
    expect(events.map((e) => e.id)).toEqual(events.map((_, i) => i + 1));
    expect(events.filter((e) => e.type === 'tool_decision')).toEqual([
      expect.objectContaining({ data: expect.objectContaining({ outcome: 'proceed_once' }) }),
    ]);
    expect(events.at(-1)).toMatchObject({ type: 'done', data: { status: 'completed' } });
  });

  it('run --ask --approve=deny decides every call without a prompt', async () => {
    h.model.script({ toolCalls: [{ name: 'list_files', arguments: {} }] }, { text: 'not listed' });
    const { code, stdout } = await runAts(['run', 'list', '--ask', '--approve=deny', '--json'], env());
    expect(code).toBe(0);
    const events = jsonLines(stdout);
    expect(events.find((e) => e.type === 'tool_decision')).toMatchObject({ data: { outcome: 'cancel', approved: false } });
    expect(events.find((e) => e.type === 'tool_result')).toMatchObject({ data: { status: 'cancelled' } });
  });

  it('SIGINT without a terminal detaches: exit 130, the task keeps running, the resume command on stderr', async () => {
    h.model.script({ text: 'slow answer', delayMs: 2000 });
    const ats_ = startAts(['run', 'slow'], env());
    await waitFor(() => ats_.output().stdout.includes('turn 1 started') || undefined, 20_000, 'the turn to start');
    ats_.child.kill('SIGINT');
    expect(await ats_.exited).toBe(130);
    const { stdout, stderr } = ats_.output();
    const id = /task (task_[0-9a-f]{32})/.exec(stdout)![1];
    expect(stderr).toMatch(
      new RegExp(`^ats: interrupted; ${id} keeps running. Follow it again with: ats logs ${id} --follow --after \\d+\n$`),
    );
    // The printed command picks up right after the last event shown: nothing twice, nothing missed.
    const after = Number(/--after (\d+)/.exec(stderr)![1]);
    const shown = stdout.split('\n').filter((line) => line.startsWith('› ') || line === 'turn 1 started').length;
    expect(after).toBeGreaterThanOrEqual(shown);
    const rest = await runAts(['logs', id, '--follow', '--after', String(after), '--json'], env());
    expect(rest.code).toBe(0);
    const events = jsonLines(rest.stdout);
    expect(events.map((e) => e.id)).toEqual(events.map((_, i) => after + 1 + i));
    expect(events.at(-1)).toMatchObject({ type: 'done', data: { status: 'completed' } });
    expect(events.find((e) => e.type === 'content')).toMatchObject({ data: { text: 'slow answer' } });
  });

  it('a wrong key prints the API message and exits 1, without echoing the key', async () => {
    const { code, stdout, stderr } = await runAts(['ls'], env({ ATS_API_KEY: 'wrong-key-12345' }));
    expect(code).toBe(1);
    expect(stdout).toBe('');
    expect(stderr).toBe('ats: The API key is invalid or expired (INVALID_API_KEY)\n');
    const missing = await runAts(['show', 'task_0123456789abcdef0123456789abcdef'], env());
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^ats: .*not found.* \(NOT_FOUND\)\n$/i);
  });

  it('prints escape sequences from the model and tools as visible text, never raw', async () => {
    h.model.script(
      { toolCalls: [{ name: 'list_files', arguments: { path: '\u001b[2J\u001b]0;pwned\u0007' } }] },
      { text: 'title \u001b]0;owned\u0007 clear \u001b[2J csi \u009b31m bidi \u202eevil' },
    );
    const human = await runAts(['run', 'escape'], env());
    expect(human.stdout).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/);
    expect(human.stdout).toContain('title \\x1b]0;owned\\x07 clear \\x1b[2J csi \\x9b31m bidi \\u202eevil');
    expect(human.stdout).toContain('● list_files path=\\x1b[2J\\x1b]0;pwned\\x07');
    const id = /task (task_[0-9a-f]{32})/.exec(human.stdout)![1];
    const json = await runAts(['logs', id, '--json'], env());
    expect(json.stdout).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/);
    const content = jsonLines(json.stdout).find((e) => e.type === 'content');
    expect(content.data.text).toBe('title \u001b]0;owned\u0007 clear \u001b[2J csi \u009b31m bidi \u202eevil');
  });

  it('uploads --file, sets --env, reads --secret from the environment variable (never argv); without it and a terminal it refuses', async () => {
    const value = 'tok-secret-value';
    h.model.script({ toolCalls: [{ name: 'shell', arguments: { command: secretProbeCommand('DEPLOY_TOKEN') } }] }, { text: 'ok' });
    const csv = join(home, 'data.csv');
    await writeFile(csv, 'a,b\n1,2\n');
    const { code, stdout, stderr } = await runAts(
      ['run', 'use the token', '--secret', 'DEPLOY_TOKEN', '--env', 'REGION=eu', '--file', csv],
      env({ DEPLOY_TOKEN: value }),
    );
    expect(code).toBe(0);
    const id = /task (task_[0-9a-f]{32})/.exec(stdout)![1];
    expect(await ats.tasks.get(id)).toMatchObject({
      secretNames: ['DEPLOY_TOKEN'],
      envKeys: ['REGION'],
      files: [{ name: 'data.csv', size: 8 }],
    });
    // The command saw exactly the variable's value (its digest), printed only redacted.
    const [redacted, digest] = secretProbeOutput('DEPLOY_TOKEN', value);
    expect(stdout).toContain(redacted);
    expect(stdout).toContain(digest);
    for (const form of secretForms(value)) expect(stdout + stderr).not.toContain(form);
    const refused = await runAts(['run', 'x', '--secret', 'ABSENT_SECRET'], env());
    expect(refused).toMatchObject({ code: 1, stderr: expect.stringContaining('set the environment variable ABSENT_SECRET') });
  });

  it('login checks the key, stores URL and key readable by the user only, and later commands use them', async () => {
    const noEnv = env({ ATS_URL: undefined, ATS_API_KEY: undefined });
    const wrong = await runAts(['login', '--url', h.url], noEnv, 'not-the-key\n');
    expect(wrong).toMatchObject({ code: 1, stderr: expect.stringContaining('INVALID_API_KEY') });
    await expect(stat(join(home, '.config', 'ats', 'config.json'))).rejects.toMatchObject({ code: 'ENOENT' });

    const login = await runAts(['login', '--url', h.url], noEnv, `${API_KEY}\n`);
    expect(login.code).toBe(0);
    expect(login.stdout + login.stderr).not.toContain(API_KEY);
    const file = join(home, '.config', 'ats', 'config.json');
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect((await stat(join(home, '.config', 'ats'))).mode & 0o777).toBe(0o700);
    expect(JSON.parse(await readFile(file, 'utf8'))).toEqual({ url: h.url, apiKey: API_KEY });
    expect(await readdir(join(home, '.config', 'ats'))).toEqual(['config.json']);
    const listed = await runAts(['ls', '--json'], noEnv);
    expect(listed.code).toBe(0);
    expect(jsonLines(listed.stdout).length).toBeGreaterThan(0);
    await rm(join(home, '.config'), { recursive: true });
  });

  it('download writes every artifact under -o and refuses artifact paths from the service that would leave it', async () => {
    h.model.script(
      { toolCalls: [{ name: 'write_file', arguments: { path: 'downloads/report.md', content: '# report\n' } }] },
      { toolCalls: [{ name: 'write_file', arguments: { path: 'downloads/sub/data.csv', content: 'a,b\n' } }] },
      { text: 'two files' },
    );
    const run = await runAts(['run', 'two files', '--json'], env());
    const id = /task (task_[0-9a-f]{32})/.exec(run.stderr)![1];
    const out = await mkdtemp(join(tmpdir(), 'ats-cli-out-'));
    const all = await runAts(['download', id, '-o', out], env());
    expect(all.code).toBe(0);
    expect(await readFile(join(out, 'report.md'), 'utf8')).toBe('# report\n');
    expect(await readFile(join(out, 'sub', 'data.csv'), 'utf8')).toBe('a,b\n');

    // A hostile (or compromised) service lists paths that climb out of the folder.
    const hostile = await startHostileArtifactsProxy(h.url, [
      '../escaped.txt',
      '/tmp/ats-cli-absolute.txt',
      'downloads/../../up.txt',
      'downloads/report.md',
    ]);
    const target = join(out, 'nested');
    const refused = await runAts(['download', id, '-o', target], env({ ATS_URL: hostile.url }));
    hostile.server.closeAllConnections();
    hostile.server.close();
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('refusing artifact path "../escaped.txt": it climbs out of the output folder');
    expect(refused.stderr).toContain('refusing artifact path "/tmp/ats-cli-absolute.txt": it is absolute');
    expect(refused.stderr).toContain('refusing artifact path "downloads/../../up.txt"');
    expect(await readdir(target)).toEqual(['report.md']);
    expect(await readdir(out)).toEqual(expect.not.arrayContaining(['escaped.txt', 'up.txt']));
    await expect(stat('/tmp/ats-cli-absolute.txt')).rejects.toMatchObject({ code: 'ENOENT' });
    // A path given on the command line is held to the same rule.
    const byArg = await runAts(['download', id, '../../etc/passwd', '-o', target], env());
    expect(byArg).toMatchObject({ code: 1, stderr: expect.stringContaining('climbs out') });
    await rm(out, { recursive: true });
  });

  it('ls, show, send and cancel', async () => {
    h.model.script({ text: 'first' });
    const run = await runAts(['run', 'listed task'], env());
    const id = /task (task_[0-9a-f]{32})/.exec(run.stdout)![1];
    const ls = await runAts(['ls'], env());
    expect(ls.stdout.split('\n')[0]).toMatch(new RegExp(`^${id} {2}completed +\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d {2}listed task$`));
    const show = await runAts(['show', id], env());
    expect(show.stdout).toContain(`${id}  completed`);
    expect(show.stdout).toContain('› listed task');
    h.model.script({ text: 'slow second', delayMs: 3000 });
    const sent = await runAts(['send', id, 'second'], env());
    expect(sent.stdout).toMatch(/^msg_\S+ sent, task (pending|running)/);
    const cancelled = await runAts(['cancel', id], env());
    expect(cancelled.stdout).toBe(`${id} cancelled\n`);
  });

  it('run --max-cost and --max-tokens set the task budgets, as JSON and as multipart with --file; send --max-tokens raises it', async () => {
    h.model.script({ text: 'budgeted' });
    const run = await runAts(['run', 'budgeted task', '--max-cost', '0.5', '--max-tokens', '5000'], env());
    expect(run.code).toBe(0);
    const id = /task (task_[0-9a-f]{32})/.exec(run.stdout)![1];
    expect(await ats.tasks.get(id)).toMatchObject({ maxCostUsd: 0.5, maxTokens: 5000 });
    expect((await runAts(['show', id], env())).stdout).toContain('; budget 5000 tokens, $0.5\n');

    h.model.script({ text: 'raised' });
    const sent = await runAts(['send', id, 'go on', '--max-tokens', '9000'], env());
    expect(sent.code).toBe(0);
    // The cost budget stays as it was.
    expect(await ats.tasks.get(id)).toMatchObject({ maxCostUsd: 0.5, maxTokens: 9000 });
    await waitFor(async () => (await ats.tasks.get(id)).status === 'completed', 10_000, 'the follow-up turn');

    h.model.script({ text: 'with a file' });
    const csv = join(home, 'budget.csv');
    await writeFile(csv, 'a\n');
    // Followed to its end, so that no turn of it is left to take a later test's scripted reply.
    const multipart = await runAts(['run', 'budgeted upload', '--file', csv, '--max-cost', '2.5', '--max-tokens', '7000'], env());
    expect(multipart.code).toBe(0);
    const uploaded = /task (task_[0-9a-f]{32})/.exec(multipart.stdout)![1];
    expect(await ats.tasks.get(uploaded)).toMatchObject({ maxCostUsd: 2.5, maxTokens: 7000, files: [{ name: 'budget.csv' }] });

    const refused = await runAts(['send', id, 'never sent', '--max-tokens', '0'], env());
    expect(refused).toMatchObject({
      code: 1,
      stderr: expect.stringContaining("error: option '--max-tokens <n>' argument '0' is invalid. expected a number of tokens"),
    });
    expect((await ats.tasks.get(id)).maxTokens).toBe(9000);
  });

  it('send --reject, --interrupt and --rollback while a turn runs', async () => {
    h.model.script({ hang: true });
    const { id } = await ats.tasks.create({ message: 'slow' });
    await waitFor(async () => ((await ats.tasks.get(id)).status === 'running' ? true : undefined));
    const rejected = await runAts(['send', id, 'not now', '--reject'], env());
    expect(rejected).toMatchObject({ code: 1, stderr: expect.stringContaining('reject') });
    const clash = await runAts(['send', id, 'x', '--interrupt', '--rollback'], env());
    expect(clash.code).not.toBe(0);
    expect(clash.stderr).toContain('cannot be used with');

    h.model.script({ hang: true });
    const interrupted = await runAts(['send', id, 'instead', '--interrupt', '--json'], env());
    expect(interrupted.code).toBe(0);
    expect(jsonLines(interrupted.stdout)[0]).toMatchObject({ id, status: 'running' });
    h.model.script({ text: 'as if never asked' });
    const rolledBack = await runAts(['send', id, 'undo that', '--rollback'], env());
    expect(rolledBack.stdout).toMatch(/^msg_\S+ sent, task running/);
    await waitFor(async () => ((await ats.tasks.get(id)).status === 'completed' ? true : undefined));
    const logs = await runAts(['logs', id], env());
    expect(logs.stdout).toContain('cancelled (interrupted)');
    expect(logs.stdout).toContain('turn undone');
    const history = [];
    for await (const event of ats.tasks.history(id)) history.push(event);
    expect(history.filter((e) => e.type === 'done').map((e) => e.data)).toEqual([
      { status: 'cancelled', turn: 1, reason: 'interrupted', usage: expect.objectContaining({ totalTokens: expect.any(Number) }) },
      { status: 'cancelled', turn: 2, reason: 'interrupted', usage: expect.objectContaining({ totalTokens: expect.any(Number) }) },
      { status: 'completed', turn: 3, usage: expect.objectContaining({ totalTokens: expect.any(Number) }) },
    ]);
  });
});

/** Passes everything to the service, except that a task's artifact list gets these paths added. */
async function startHostileArtifactsProxy(target: string, paths: string[]): Promise<{ url: string; server: Server }> {
  const upstream = new URL(target);
  const server = createServer((req, res) => {
    const forward = httpRequest(
      { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers },
      (answer) => {
        if (!/\/artifacts$/.test(new URL(req.url!, target).pathname)) {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          return void answer.pipe(res);
        }
        const chunks: Buffer[] = [];
        answer.on('data', (chunk: Buffer) => chunks.push(chunk));
        answer.on('end', () => {
          const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
          body.files = paths.map((path) => ({ ...body.files[0], path, name: path.split('/').at(-1) }));
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify(body));
        });
      },
    );
    req.pipe(forward);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}
