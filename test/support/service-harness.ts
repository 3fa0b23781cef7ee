import type { LogLevel } from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { appendFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AtsClient } from '@agentic-task-service/client';
import type { ScriptedOpenAiServer } from '@app/model-provider/testing/scripted-openai-server';
import { startScriptedOpenAiServer } from '@app/model-provider/testing/scripted-openai-server';
import { startStandalone } from '../../services/standalone/src/bootstrap';
import { startDistributedDeployment } from './distributed-deployment';
import type { PersistedItem } from './persisted-files';
import { persistedFiles } from './persisted-files';

export const API_KEY = 'test-key-tenant-a';
export const OTHER_API_KEY = 'test-key-tenant-b';

export interface Harness {
  readonly url: string;
  readonly app: NestFastifyApplication;
  readonly model: ScriptedOpenAiServer;
  readonly dataDir: string;
  /**
   * The typed client (libs/client) as tenant A, or as `apiKey`. In the distributed mode its
   * streams go to the other API instance than its commands, as `url` and `api` do.
   */
  client(apiKey?: string): AtsClient;
  api(path: string, init?: RequestInit & { key?: string | null; json?: unknown }): Promise<{ status: number; body: any; headers: Headers }>;
  /**
   * Stops the service, flushing what it writes, and returns everything it persisted (leak
   * checks): the files under DATA_DIR; distributed, also the event store's rows, the MinIO
   * objects, the Temporal workflow histories and every instance's log.
   */
  stopAndCollectPersisted(): Promise<PersistedItem[]>;
  close(): Promise<void>;
}

/**
 * The service under test, with a scripted model behind a real HTTP port: the all-in-one service
 * on a fresh DATA_DIR, or, when ATS_E2E_MODE=distributed (the `e2e-distributed` jest project),
 * a distributed deployment running the very same suite.
 */
export async function startHarness(
  extraEnv: Record<string, string> = {},
  withModel = true,
  logLevels: LogLevel[] = ['error'],
): Promise<Harness> {
  if (process.env.ATS_E2E_MODE === 'distributed') return startDistributedHarness(extraEnv, withModel, logLevels);
  const dataDir = await mkdtemp(join(tmpdir(), 'ats-e2e-'));
  const model = await startScriptedOpenAiServer();
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    DATA_DIR: dataDir,
    API_KEYS: `${API_KEY},${OTHER_API_KEY}`,
    SSE_KEEPALIVE_MS: '200',
    ...(withModel ? { LLM_BASE_URL: model.url, LLM_MODEL: 'scripted-model', LLM_MAX_RETRIES: '2' } : {}),
    ...extraEnv,
  };
  const { app, url } = await startStandalone({ env, port: 0, logLevels });
  return {
    url,
    app,
    model,
    dataDir,
    client: (apiKey = API_KEY) => new AtsClient({ baseUrl: url, apiKey }),
    api: (path, init) => callApi(url, path, init),
    async stopAndCollectPersisted() {
      await app.close();
      return persistedFiles(dataDir);
    },
    async close() {
      await app.close();
      await model.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

export async function waitFor<T>(probe: () => Promise<T | undefined> | T | undefined, timeoutMs = 10_000, what = 'condition'): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * Two API instances, two orchestrator workers, two sandbox instances and one artifacts instance
 * over real PostgreSQL, NATS, Temporal and MinIO. Commands go to one API instance and `url` (the
 * SSE streams) names the other, so every suite also checks that any instance serves any task.
 * `dataDir` is the sandboxes' volume (workspaces/<taskId>); suites that reach into the Nest app
 * run in the all-in-one mode only.
 */
async function startDistributedHarness(extraEnv: Record<string, string>, withModel: boolean, logLevels: LogLevel[]): Promise<Harness> {
  const model = await startScriptedOpenAiServer();
  // The processes always log at `log` and above (the deployment waits for their start lines);
  // a suite that asks for debug or verbose output gets it.
  const verbose = (['verbose', 'debug'] as const).find((level) => logLevels.includes(level));
  const env: Record<string, string> = {
    API_KEYS: `${API_KEY},${OTHER_API_KEY}`,
    SSE_KEEPALIVE_MS: '200',
    ...(verbose ? { LOG_LEVEL: verbose } : {}),
    ...(withModel ? { LLM_BASE_URL: model.url, LLM_MODEL: 'scripted-model', LLM_MAX_RETRIES: '2' } : {}),
    ...extraEnv,
  };
  const deployment = await startDistributedDeployment({ api: 2, orchestrator: 2, sandbox: 2, artifacts: 1 }, env).catch(async (error) => {
    await model.close();
    throw error;
  });
  const [commandsUrl, streamsUrl] = deployment.apiUrls;
  const inProcessOnly = (what: string) => () => {
    throw new Error(`${what} exists in the all-in-one mode only; this suite cannot run with ATS_E2E_MODE=distributed`);
  };
  return {
    url: streamsUrl,
    get app(): NestFastifyApplication {
      return inProcessOnly('harness.app')();
    },
    // Where the workspaces are, as in the all-in-one DATA_DIR: the sandboxes' shared volume.
    dataDir: deployment.sandboxVolume,
    model,
    client: (apiKey = API_KEY) => new AtsClient({ baseUrl: commandsUrl, apiKey, fetch: streamsTo(commandsUrl, streamsUrl) }),
    api: (path, init) => callApi(commandsUrl, path, init),
    stopAndCollectPersisted: () => deployment.stopAndCollectPersisted(),
    async close() {
      if (process.env.ATS_DIST_LOG) await appendFile(process.env.ATS_DIST_LOG, deployment.output());
      await deployment.close();
      await model.close();
    },
  };
}

/** A fetch that sends the stream requests of a client of `commandsUrl` to `streamsUrl`. */
const streamsTo =
  (commandsUrl: string, streamsUrl: string) =>
  (request: Request): Promise<Response> =>
    new URL(request.url).pathname.endsWith('/stream')
      ? fetch(new Request(request.url.replace(commandsUrl, streamsUrl), request))
      : fetch(request);

async function callApi(url: string, path: string, init: RequestInit & { key?: string | null; json?: unknown } = {}) {
  const { key = API_KEY, json, ...rest } = init;
  const headers: Record<string, string> = { ...(rest.headers as Record<string, string>) };
  if (key !== null) headers.authorization = `Bearer ${key}`;
  if (json !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(`${url}${path}`, { ...rest, headers, body: json === undefined ? rest.body : JSON.stringify(json) });
  const text = await response.text();
  let body: any = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON: keep the text
  }
  return { status: response.status, body, headers: response.headers };
}
