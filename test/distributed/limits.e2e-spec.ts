import { writeFile } from 'node:fs/promises';
import { connect } from 'nats';
import { ScriptedOpenAiServer, startScriptedOpenAiServer } from '@app/model-provider/testing/scripted-openai-server';
import { DistributedDeployment, startDistributedDeployment } from '../support/distributed-deployment';

// Budgets and limits in the distributed mode: two API instances share one rate-limit window per
// tenant (a NATS JetStream KV bucket). The window is shortened to 3 s (RATE_LIMIT_WINDOW_MS, a
// test setting).

jest.setTimeout(300_000);

const KEY = 'dist-limits-key';
const OTHER_KEY = 'dist-limits-other-key';
const LIMIT = 4;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('Limits across instances of the distributed deployment', () => {
  let model: ScriptedOpenAiServer;
  let d: DistributedDeployment;

  beforeAll(async () => {
    model = await startScriptedOpenAiServer();
    d = await startDistributedDeployment(
      { api: 2, orchestrator: 2, sandbox: 1, artifacts: 1 },
      {
        API_KEYS: `${KEY},${OTHER_KEY}`,
        LLM_BASE_URL: model.url,
        LLM_MODEL: 'scripted',
        LLM_MAX_RETRIES: '1',
        RATE_LIMIT_PER_MINUTE: String(LIMIT),
        RATE_LIMIT_WINDOW_MS: '3000',
      },
    );
  });
  afterAll(async () => {
    if (process.env.ATS_DIST_LOG && d) await writeFile(process.env.ATS_DIST_LOG, d.output());
    if (d) await removeBuckets(d.sharedEnv.NATS_URL, d.sharedEnv.NATS_SUBJECT_PREFIX);
    await d?.close();
    await model?.close();
  });

  const api = async (instance: number, path: string, init: { method?: string; json?: unknown; key?: string } = {}) => {
    const res = await fetch(`${d.apiUrls[instance]}${path}`, {
      method: init.method ?? 'GET',
      headers: { authorization: `Bearer ${init.key ?? KEY}`, 'content-type': 'application/json' },
      body: init.json === undefined ? undefined : JSON.stringify(init.json),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined, headers: res.headers };
  };
  const create = (instance: number, key?: string) => api(instance, '/api/v1/tasks', { method: 'POST', json: { message: 'hi' }, ...(key ? { key } : {}) });

  it('shares the rate limit between API instances: requests alternating between them are refused after the limit, on both', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < LIMIT; i++) statuses.push((await create(i % 2)).status);
    expect(statuses).toEqual(Array(LIMIT).fill(201));
    const refused = await create(LIMIT % 2);
    expect(refused.status).toBe(429);
    expect(refused.body.error.code).toBe('RATE_LIMITED');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect((await create((LIMIT + 1) % 2)).status).toBe(429);
    // The other tenant's window is its own.
    expect((await create(1, OTHER_KEY)).status).toBe(201);

    await sleep(Number(refused.headers.get('retry-after')) * 1000);
    expect((await create(1)).status).toBe(201);
  });

  it('admits exactly the limit when both instances are hit at once (compare-and-set on one window)', async () => {
    await sleep(3_200); // a fresh window
    const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => create(i % 2)));
    const statuses = answers.map((a) => a.status).sort();
    expect(statuses).toEqual([...Array(LIMIT).fill(201), ...Array(10 - LIMIT).fill(429)]);
  });
});

/** The deployment's coordination buckets, so the shared NATS server does not collect them. */
async function removeBuckets(url: string, namespace: string): Promise<void> {
  const connection = await connect({ servers: url });
  try {
    const manager = await connection.jetstreamManager();
    for await (const stream of manager.streams.list()) {
      if (stream.config.name.startsWith(`KV_${namespace}_`)) await manager.streams.delete(stream.config.name);
    }
  } finally {
    await connection.close();
  }
}
