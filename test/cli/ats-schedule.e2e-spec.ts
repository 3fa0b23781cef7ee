import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runAts } from '../support/ats-cli';
import type { Harness } from '../support/service-harness';
import { API_KEY, startHarness } from '../support/service-harness';

// `ats schedule …` (docs/guide/cli.md) as a script runs it: create, ls, show, pause, resume, rm,
// and the secret taken from the environment, never from argv nor shown.

jest.setTimeout(90_000);

const CANARY = 'cli-schedule-secret-5b1d4c8f';

describe('ats schedule', () => {
  let h: Harness;
  let home: string;
  const env = (extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv => ({
    PATH: process.env.PATH,
    HOME: home,
    XDG_CONFIG_HOME: join(home, '.config'),
    ATS_URL: h.url,
    ATS_API_KEY: API_KEY,
    ...extra,
  });

  beforeAll(async () => {
    h = await startHarness();
    home = await mkdtemp(join(tmpdir(), 'ats-cli-home-'));
  });
  afterAll(async () => {
    await h.close();
    await rm(home, { recursive: true, force: true });
  });

  it('creates, lists, shows, pauses, resumes and removes a schedule', async () => {
    const created = await runAts(
      ['schedule', 'create', '0 9 * * MON-FRI', 'morning report', '--tz', 'Europe/Paris', '--secret', 'REPORT_TOKEN', '--json'],
      env({ REPORT_TOKEN: CANARY }),
    );
    expect(created.stderr).toBe('');
    expect(created.code).toBe(0);
    const schedule = JSON.parse(created.stdout);
    expect(schedule).toMatchObject({ cron: '0 9 * * MON-FRI', timezone: 'Europe/Paris', task: { secretNames: ['REPORT_TOKEN'] } });
    expect(created.stdout).not.toContain(CANARY);

    const ls = await runAts(['schedule', 'ls'], env());
    expect(ls.code).toBe(0);
    expect(ls.stdout).toContain(schedule.id);
    expect(ls.stdout).toContain('morning report');

    const paused = await runAts(['schedule', 'pause', schedule.id], env());
    expect(paused.stdout).toContain('paused');
    const resumed = await runAts(['schedule', 'resume', schedule.id, '--json'], env());
    expect(JSON.parse(resumed.stdout).paused).toBe(false);

    const shown = await runAts(['schedule', 'show', schedule.id, '--json'], env());
    expect(JSON.parse(shown.stdout)).toMatchObject({ id: schedule.id, runs: [] });

    expect((await runAts(['schedule', 'rm', schedule.id], env())).stdout).toContain(`${schedule.id} deleted`);
    const gone = await runAts(['schedule', 'show', schedule.id], env());
    expect(gone.code).not.toBe(0);
    expect(gone.stderr).toContain('NOT_FOUND');
  });

  it('says why a cron is refused', async () => {
    const refused = await runAts(['schedule', 'create', '* * * * * *', 'too often'], env());
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('SCHEDULE_MIN_INTERVAL_MS');
  });
});
