import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ScriptedOpenAiServer, startScriptedOpenAiServer } from '@app/model-provider/testing/scripted-openai-server';
import { startStandalone } from '../../services/standalone/src/bootstrap';

export const API_KEY = 'test-key-tenant-a';
export const OTHER_API_KEY = 'test-key-tenant-b';

export interface Harness {
  readonly url: string;
  readonly app: NestFastifyApplication;
  readonly model: ScriptedOpenAiServer;
  readonly dataDir: string;
  api(path: string, init?: RequestInit & { key?: string | null; json?: unknown }): Promise<{ status: number; body: any; headers: Headers }>;
  close(): Promise<void>;
}

/** The all-in-one service on a fresh DATA_DIR, with a scripted model behind a real HTTP port. */
export async function startHarness(extraEnv: Record<string, string> = {}, withModel = true): Promise<Harness> {
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
  const { app, url } = await startStandalone({ env, port: 0, logLevels: ['error'] });
  return {
    url,
    app,
    model,
    dataDir,
    async api(path, init = {}) {
      const { key = API_KEY, json, ...rest } = init;
      const headers: Record<string, string> = { ...(rest.headers as Record<string, string>) };
      if (key !== null) headers.authorization = `Bearer ${key}`;
      if (json !== undefined) headers['content-type'] = 'application/json';
      const response = await fetch(`${url}${path}`, { ...rest, headers, body: json === undefined ? rest.body : JSON.stringify(json) });
      const text = await response.text();
      let body: unknown = text;
      try {
        body = JSON.parse(text);
      } catch {
        // not JSON: keep the text
      }
      return { status: response.status, body, headers: response.headers };
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
