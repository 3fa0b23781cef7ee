import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AtsClient, TaskEventRecord } from '@agentic-task-service/client';
import { runAts } from '../support/ats-cli';
import type { Harness } from '../support/service-harness';
import { API_KEY, startHarness } from '../support/service-harness';
import { twoStepSource } from '../support/two-step-source';

// The real `ats` binary (pipes, as a script runs it) against the real service with a scripted
// model: `ats files` lists the workspace as of any event and saves a file's bytes of then, and
// `ats fork` creates a fork after a result or after a `done` with a message and follows its turn.

jest.setTimeout(90_000);

describe('ats files and ats fork', () => {
  let h: Harness;
  let ats: AtsClient;
  let home: string;
  let source: string;
  let results: TaskEventRecord[];
  let doneId: number;
  const env = (): NodeJS.ProcessEnv => ({
    PATH: process.env.PATH,
    HOME: home,
    XDG_CONFIG_HOME: join(home, '.config'),
    ATS_URL: h.url,
    ATS_API_KEY: API_KEY,
  });
  const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

  beforeAll(async () => {
    h = await startHarness();
    ats = h.client();
    home = await mkdtemp(join(tmpdir(), 'ats-cli-home-'));
    ({ source, results, doneId } = await twoStepSource(h));
    expect(results).toHaveLength(2);
  });
  afterAll(async () => {
    await h.close();
    await rm(home, { recursive: true, force: true });
  });

  it('files lists sha256, size and path as of an event, and now', async () => {
    const first = await runAts(['files', source, '--at', String(results[0].id)], env());
    expect(first).toMatchObject({ code: 0, stderr: '' });
    expect(first.stdout).toBe(`${sha256('one')}         3 B  first.txt\n`);
    const now = await runAts(['files', source], env());
    expect(now.stdout).toBe(`${sha256('changed')}         7 B  first.txt\n${sha256('two')}         3 B  second.txt\n`);
    const before = await runAts(['files', source, '--at', '1', '--json'], env());
    expect(before).toMatchObject({ code: 0, stdout: '' });
  });

  it('files --get saves the bytes of then under the current folder, and never overwrites', async () => {
    const cwd = await mkdtemp(join(tmpdir(), 'ats-files-get-'));
    try {
      const got = await runAts(['files', source, '--at', String(results[0].id), '--get', 'first.txt'], env(), '', cwd);
      expect(got.code).toBe(0);
      expect(await readFile(join(cwd, 'first.txt'), 'utf8')).toBe('one');
      await writeFile(join(cwd, 'mine.txt'), 'keep');
      const refused = await runAts(['files', source, '--get', 'first.txt', '-o', 'mine.txt'], env(), '', cwd);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain('mine.txt exists; not overwritten');
      expect(await readFile(join(cwd, 'mine.txt'), 'utf8')).toBe('keep');
      const missing = await runAts(['files', source, '--at', String(results[0].id), '--get', 'second.txt', '-o', 'x'], env(), '', cwd);
      expect(missing.code).toBe(1);
      expect(missing.stderr).toContain('(NOT_FOUND)');
    } finally {
      await rm(cwd, { recursive: true, force: true });
    }
  });

  it('fork after the first result prints the fork and follows its turn to the end', async () => {
    h.model.script({ text: 'The fork went on.' });
    const forked = await runAts(['fork', source, '--after', String(results[0].id)], env());
    expect(forked.code).toBe(0);
    const printed = /^(task_[0-9a-f]{32}) (?:running|pending) \(forked from (\S+) after event (\d+)\)$/m.exec(forked.stdout);
    expect(printed?.slice(2)).toEqual([source, String(results[0].id)]);
    const id = printed![1];
    expect(forked.stdout).toContain(`forked from ${source} after event ${results[0].id}`);
    expect(forked.stdout).toContain('The fork went on.');
    expect(forked.stdout).toContain('✔ completed');
    expect(await ats.tasks.get(id)).toMatchObject({ status: 'completed', forkedFrom: { taskId: source, eventId: results[0].id } });
  });

  it('fork after the done with a message starts a turn in the fork; without one the fork rests', async () => {
    h.model.script({ text: 'A new turn in the fork.' });
    const withMessage = await runAts(['fork', source, '--after', String(doneId), '--message', 'Go on', '--json'], env());
    expect(withMessage.code).toBe(0);
    const lines = withMessage.stdout
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(lines[0]).toMatchObject({ forkedFrom: { taskId: source, eventId: doneId } });
    expect(lines.slice(1).map((event) => event.type)).toEqual(expect.arrayContaining(['forked', 'message', 'content', 'done']));
    expect(lines.find((event) => event.type === 'message').data.text).toBe('Go on');
    expect((await ats.tasks.get(lines[0].id)).turn).toBe(2);

    const resting = await runAts(['fork', source, '--after', String(doneId)], env());
    expect(resting.code).toBe(0);
    expect(resting.stdout).toMatch(new RegExp(`^task_[0-9a-f]{32} completed \\(forked from ${source} after event ${doneId}\\)\\n$`));
  });

  it('fork after an event that cannot be forked from says why, exit 1', async () => {
    const refused = await runAts(['fork', source, '--after', '2'], env());
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/\(CONFLICT\)\n$/);
    const usage = await runAts(['fork', source, '--after', '0'], env());
    expect(usage.code).not.toBe(0);
    expect(usage.stderr).toContain('expected an event id');
  });
});
