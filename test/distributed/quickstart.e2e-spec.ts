import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmod, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import type { ScriptedOpenAiServer } from '@app/model-provider/testing/scripted-openai-server';
import { startScriptedOpenAiServer } from '@app/model-provider/testing/scripted-openai-server';
import { compiledEntry } from '../support/compiled-entry';
import { distributedInfraFromEnv, removeCoordinationBuckets } from '../support/distributed-deployment';
import { freePort } from '../support/service-process';

// The distributed-mode quick start of docs/operations/deployment.md, run as written: the servers
// through infra/dev/ensure-*.sh (already running here, so nothing is installed or downloaded),
// the four processes through npm run start:*, then one task against a scripted model. Only what
// must differ on a shared machine is changed: the ports (free ones), DATA_DIR (a temporary
// folder) and, through the environment, the schema, subjects, task queue and bucket of this run.

jest.setTimeout(240_000);

const ROOT = join(__dirname, '..', '..');
const KEY = 'dev-key';

/** The bash block after the `<!-- quickstart` marker. */
async function quickstartSnippet(): Promise<string> {
  const page = await readFile(join(ROOT, 'docs/operations/deployment.md'), 'utf8');
  const block = /<!-- quickstart[^>]*-->\n```bash\n([\s\S]*?)\n```/.exec(page);
  if (!block) throw new Error('docs/operations/deployment.md has no quickstart block');
  return block[1];
}

/** SIGTERM to a process group, SIGKILL to what is left of it after 20 s. */
async function stopGroup(pgid: number): Promise<void> {
  const alive = () => {
    try {
      process.kill(-pgid, 0);
      return true;
    } catch {
      return false;
    }
  };
  if (!alive()) return;
  process.kill(-pgid, 'SIGTERM');
  for (const deadline = Date.now() + 20_000; alive() && Date.now() < deadline;) await new Promise((r) => setTimeout(r, 100));
  if (alive()) process.kill(-pgid, 'SIGKILL');
}

describe('The distributed-mode quick start (docs/operations/deployment.md)', () => {
  const run = randomBytes(4).toString('hex');
  let model: ScriptedOpenAiServer;
  let dataRoot: string;
  let shell: ChildProcess | undefined;
  let output = '';

  beforeAll(async () => {
    distributedInfraFromEnv(); // the servers this suite expects to find running
    compiledEntry('services/api/src/main.ts'); // `npm run build`, as the page asks before the block
    model = await startScriptedOpenAiServer();
    dataRoot = await mkdtemp(join(tmpdir(), 'ats-quickstart-'));
    // The sandbox's commands run as per-task uids that must traverse down to their workspace.
    await chmod(dataRoot, 0o711);
  });
  afterAll(async () => {
    // The block's shell and the four processes are one process group, this test's own: all of it
    // goes, the processes too when the shell has already exited.
    if (shell?.pid !== undefined) await stopGroup(shell.pid);
    await model?.close();
    const db = new Client({ connectionString: process.env.DATABASE_URL });
    await db.connect();
    await db.query(`DROP SCHEMA IF EXISTS "quickstart_${run}" CASCADE`).finally(() => db.end());
    await removeCoordinationBuckets(process.env.NATS_URL!, `quickstart-${run}`);
    if (dataRoot) await rm(dataRoot, { recursive: true, force: true });
  });

  it('starts the four processes, each worker on its own HEALTH_PORT, and runs a task to completion', async () => {
    const ports = { api: await freePort(), artifacts: await freePort(), sandbox: await freePort(), orchestrator: await freePort() };
    const snippet = (await quickstartSnippet())
      .replace('HEALTH_PORT=9101', `HEALTH_PORT=${ports.artifacts}`)
      .replace('HEALTH_PORT=9102', `HEALTH_PORT=${ports.sandbox}`)
      .replace('HEALTH_PORT=9103', `HEALTH_PORT=${ports.orchestrator}`)
      .replace('PORT=3000', `PORT=${ports.api}`)
      .replaceAll('DATA_DIR=data/', `DATA_DIR=${dataRoot}/`);
    shell = spawn('bash', ['-c', snippet], {
      cwd: ROOT,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: {
        ...process.env,
        LLM_BASE_URL: model.url,
        LLM_MODEL: 'scripted',
        EVENT_STORE_SCHEMA: `quickstart_${run}`,
        NATS_SUBJECT_PREFIX: `quickstart-${run}`,
        TEMPORAL_TASK_QUEUE: `quickstart-${run}`,
        MINIO_BUCKET: `ats-quickstart-${run}`,
      },
    });
    shell.stdout!.on('data', (d) => (output += d));
    shell.stderr!.on('data', (d) => (output += d));

    const until = async <T>(what: string, probe: () => Promise<T | undefined>, ms = 120_000): Promise<T> => {
      for (const deadline = Date.now() + ms; Date.now() < deadline; await new Promise((r) => setTimeout(r, 250))) {
        if (shell!.exitCode !== null) throw new Error(`the quick start exited (${shell!.exitCode}) while waiting for ${what}:\n${output}`);
        const value = await probe().catch(() => undefined);
        if (value !== undefined) return value;
      }
      throw new Error(`timed out waiting for ${what}:\n${output}`);
    };
    const ready = (port: number) => async () => ((await fetch(`http://127.0.0.1:${port}/readyz`)).status === 200 ? true : undefined);
    for (const [service, port] of Object.entries(ports)) await until(`${service} to be ready on ${port}`, ready(port));

    model.script({ text: 'Done.' });
    const api = `http://127.0.0.1:${ports.api}/api/v1/tasks`;
    const headers = { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' };
    const created = await fetch(api, { method: 'POST', headers, body: JSON.stringify({ message: 'hi' }) });
    expect(created.status).toBe(201);
    const id = ((await created.json()) as { data: { id: string } }).data.id;
    const status = await until('the task to finish', async () => {
      const task = (await (await fetch(`${api}/${id}`, { headers })).json()) as { data: { status: string } };
      return ['completed', 'failed', 'cancelled'].includes(task.data.status) ? task.data.status : undefined;
    });
    expect(status).toBe('completed');
  });
});
