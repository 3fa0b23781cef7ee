import { startScriptedOpenAiServer } from '@app/model-provider/testing/scripted-openai-server';
import { freePort } from '../test/support/service-process';
import { benchServiceEnv, startChildService } from './lib/child-service';
import { cpuMs } from './lib/proc-cpu';
import { nextMinute, sleep } from './lib/timing';
import { makeTmpDir, removeDir } from './lib/tmp-dir';

export interface ScheduleCostFigures {
  readonly schedules: number;
  /** The service's CPU (user + system) over a quiet stretch with every schedule loaded, before the first firing, % of one core. */
  readonly idleBeforePercent: number;
  readonly idleBeforeS: number;
  /** The same between two firings, from the end of the first one's work to just before the next due time. */
  readonly betweenPercent: number;
  readonly betweenS: number;
  /** CPU the firing itself cost: recording each run and creating its task, whose turn then runs (scripted model). */
  readonly firingCpuS: number;
  readonly firingWallS: number;
  /** Runs started (sample of schedules), each task completed: each schedule fired once per minute, none twice. */
  readonly runsPerScheduleSample: readonly number[];
}

/**
 * Benchmark 13 (issue 34): what 1,000 schedules firing every minute cost between firings. The
 * all-in-one service runs as `npm start` does; the schedules are created, a quiet stretch before the
 * first due time is measured, then the first firing (1,000 tasks, each a turn of the scripted
 * model) and the stretch after it up to a second before the next one.
 */
export async function benchScheduleCost(options: { schedules: number; log: (line: string) => void }): Promise<ScheduleCostFigures> {
  const dataDir = await makeTmpDir('schedules');
  const model = await startScriptedOpenAiServer();
  const key = 'bench-schedules-key';
  const service = await startChildService({
    env: { ...benchServiceEnv(dataDir, key, model.url), MAX_SCHEDULES_PER_TENANT: String(options.schedules) },
    port: await freePort(),
  });
  const pid = service.child.pid!;
  const call = async (method: string, path: string, json?: unknown) => {
    const response = await fetch(`${service.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(json ? { 'content-type': 'application/json' } : {}) },
      ...(json ? { body: JSON.stringify(json) } : {}),
    });
    const body = (await response.json()) as { data: any };
    if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(body)}`);
    return body.data;
  };
  try {
    // Created in the first half of a minute, so the quiet stretch before the first due time is long enough.
    if (new Date().getSeconds() > 20) await sleep((60 - new Date().getSeconds()) * 1000 + 200);
    const ids: string[] = [];
    for (let i = 0; i < options.schedules; i++) {
      ids.push((await call('POST', '/api/v1/schedules', { cron: '* * * * *', task: { message: `tick ${i}`, showInHistory: false } })).id);
    }
    options.log(`schedules: ${ids.length} created at :${new Date().getSeconds()}`);
    const firstDue = nextMinute(Date.now());
    await sleep(2000);
    const idleFrom = Date.now();
    const idleCpu = await cpuMs(pid);
    await sleep(firstDue - 1000 - Date.now());
    const idleBeforePercent = (100 * ((await cpuMs(pid)) - idleCpu)) / (Date.now() - idleFrom);
    const idleBeforeS = (Date.now() - idleFrom) / 1000;
    options.log(`schedules: before the first due time ${idleBeforePercent.toFixed(2)} % of a core over ${idleBeforeS.toFixed(1)} s`);

    // The firing: until a whole second passes with under 20 ms of CPU.
    const firingCpu = await cpuMs(pid);
    await sleep(firstDue - Date.now() + 50);
    let last = await cpuMs(pid);
    for (;;) {
      await sleep(1000);
      const now = await cpuMs(pid);
      if (now - last < 20 || Date.now() > firstDue + 55_000) break;
      last = now;
    }
    const firingCpuS = ((await cpuMs(pid)) - firingCpu) / 1000;
    const firingWallS = (Date.now() - firstDue) / 1000;
    options.log(`schedules: firing took ${firingCpuS.toFixed(1)} s of CPU over ${firingWallS.toFixed(1)} s`);

    const betweenFrom = Date.now();
    const betweenCpu = await cpuMs(pid);
    await sleep(firstDue + 59_000 - Date.now());
    const betweenPercent = (100 * ((await cpuMs(pid)) - betweenCpu)) / (Date.now() - betweenFrom);
    const betweenS = (Date.now() - betweenFrom) / 1000;
    options.log(`schedules: between firings ${betweenPercent.toFixed(2)} % of a core over ${betweenS.toFixed(1)} s`);

    await sleep(firstDue + 70_000 - Date.now());
    const sample = ids.filter((_, i) => i % Math.ceil(ids.length / 10) === 0);
    const runsPerScheduleSample = await Promise.all(
      sample.map(async (id) => {
        const runs = (await call('GET', `/api/v1/schedules/${id}/runs?limit=100`)).runs as {
          dueAt: string;
          outcome: string;
          taskId?: string;
        }[];
        if (new Set(runs.map((r) => r.dueAt)).size !== runs.length) throw new Error(`schedule ${id} recorded a due time twice`);
        const started = runs.filter((r) => r.outcome === 'started');
        for (const run of started) {
          const status = (await call('GET', `/api/v1/tasks/${run.taskId}`)).status as string;
          if (status !== 'completed') throw new Error(`task ${run.taskId} of schedule ${id} is ${status}, not completed`);
        }
        return started.length;
      }),
    );
    return {
      schedules: ids.length,
      idleBeforePercent,
      idleBeforeS,
      betweenPercent,
      betweenS,
      firingCpuS,
      firingWallS,
      runsPerScheduleSample,
    };
  } finally {
    await service.stop();
    await model.close();
    await removeDir(dataDir);
  }
}
