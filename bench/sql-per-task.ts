import Database from 'better-sqlite3';
import { performance } from 'node:perf_hooks';

// Diagnostic, not part of `npm run bench`: how many embedded-store (SQLite) statements one created
// task costs, and how long they hold the event loop. Wraps better-sqlite3's statement calls
// (run/get/all) in this process, starts the service in-process with the scripted model answering
// "ok", creates tasks one at a time and waits for each task's turn to finish before the next, so
// nothing overlaps and each statement's time is its own. The store's group commit makes
// BEGIN/SAVEPOINT/RELEASE/COMMIT statements of their own; COMMIT includes the WAL fsync.
// Usage: npx ts-node --transpile-only -r tsconfig-paths/register bench/sql-per-task.ts [tasks=200]

const stats = new Map<string, { n: number; ms: number }>();
const note = (key: string, ms: number) => {
  const entry = stats.get(key) ?? { n: 0, ms: 0 };
  entry.n++;
  entry.ms += ms;
  stats.set(key, entry);
};
const shortSql = (text: unknown) => String(text).replace(/\s+/g, ' ').trim().slice(0, 70);
type AnyFn = (...args: unknown[]) => unknown;
const probe = new Database(':memory:');
const statementPrototype = Object.getPrototypeOf(probe.prepare('SELECT 1')) as Record<'run' | 'get' | 'all', AnyFn>;
probe.close();
for (const method of ['run', 'get', 'all'] as const) {
  const original = statementPrototype[method];
  statementPrototype[method] = function (this: { source: string }, ...args: unknown[]) {
    const t = performance.now();
    try {
      return original.apply(this, args);
    } finally {
      note(shortSql(this.source), performance.now() - t);
    }
  };
}

import { startScriptedOpenAiServer } from '@app/model-provider/testing/scripted-openai-server';
import { startStandalone } from '../services/standalone/src/bootstrap';
import { makeTmpDir, removeDir } from './lib/tmp-dir';
import { waitUntil } from './lib/timing';

async function main(): Promise<void> {
  const tasks = Number(process.argv[2] ?? 200);
  const model = await startScriptedOpenAiServer({ defaultReply: { text: 'ok' } });
  const dataDir = await makeTmpDir('sql');
  const env = {
    PATH: process.env.PATH,
    DATA_DIR: dataDir,
    API_KEYS: 'k',
    LLM_BASE_URL: model.url,
    LLM_MODEL: 'bench',
    LLM_STREAM: 'false',
  };
  const { app, url } = await startStandalone({ env, port: 0, logLevels: ['error'] });
  const create = async (): Promise<string> => {
    const res = await fetch(`${url}/api/v1/tasks`, {
      method: 'POST',
      headers: { authorization: 'Bearer k', 'content-type': 'application/json' },
      body: '{"message":"bench"}',
    });
    if (res.status !== 201) throw new Error(`create: HTTP ${res.status}`);
    return ((await res.json()) as { data: { id: string } }).data.id;
  };
  const status = async (id: string): Promise<string> => {
    const res = await fetch(`${url}/api/v1/tasks/${id}`, { headers: { authorization: 'Bearer k' } });
    return ((await res.json()) as { data: { status: string } }).data.status;
  };
  const createAndFinish = async () => {
    const id = await create();
    await waitUntil(`task ${id} to complete`, async () => (await status(id)) === 'completed', 10_000, 2);
  };
  try {
    for (let i = 0; i < 20; i++) await createAndFinish();
    stats.clear();
    for (let i = 0; i < tasks; i++) await createAndFinish();
    let total = 0;
    console.log(`per created task (${tasks} tasks, each one turn):`);
    for (const [key, { n, ms }] of [...stats].sort((a, b) => b[1].ms - a[1].ms)) {
      total += ms;
      console.log(`${(n / tasks).toFixed(2).padStart(6)} × ${(ms / n).toFixed(3).padStart(6)} ms  ${key}`);
    }
    console.log(
      `SQLite time per task (all statements): ${(total / tasks).toFixed(2)} ms → at most ~${Math.floor(1000 / (total / tasks))} tasks/s on one event loop`,
    );
    void model;
  } finally {
    await app.close();
    await model.close();
    await removeDir(dataDir);
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
