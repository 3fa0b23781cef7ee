import { writeFile } from 'node:fs/promises';
import type { ScriptedOpenAiServer } from '@app/model-provider/testing/scripted-openai-server';
import { startScriptedOpenAiServer } from '@app/model-provider/testing/scripted-openai-server';
import type { DistributedDeployment } from '../support/distributed-deployment';
import { startDistributedDeployment } from '../support/distributed-deployment';

// Budgets and limits in the distributed mode: two API instances share one rate-limit window per
// tenant (a NATS JetStream KV bucket; the window shortened to 3 s by RATE_LIMIT_WINDOW_MS, a test
// setting), and two orchestrators (Temporal workers) keep a tenant to MAX_RUNNING_TASKS_PER_TENANT
// running turns between them.

jest.setTimeout(300_000);

const KEY = 'dist-limits-key';
const OTHER_KEY = 'dist-limits-other-key';
const CAPPED_KEY = 'dist-limits-capped-key';
const LIMIT = 4;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('Limits across instances of the distributed deployment', () => {
  let model: ScriptedOpenAiServer;
  let d: DistributedDeployment;
  /** The user message each model call answered, in arrival order; a message starting with "slow" takes 2.5 s. */
  const answered: string[] = [];

  beforeAll(async () => {
    model = await startScriptedOpenAiServer({
      defaultReply: (body) => {
        const text = String(body.messages?.filter((m) => m.role === 'user').at(-1)?.content);
        answered.push(text);
        return { text: 'done', delayMs: text.startsWith('slow') ? 2_500 : 50 };
      },
    });
    d = await startDistributedDeployment(
      { api: 2, orchestrator: 2, sandbox: 1, artifacts: 1 },
      {
        API_KEYS: `${KEY},${OTHER_KEY},${CAPPED_KEY}`,
        LLM_BASE_URL: model.url,
        LLM_MODEL: 'scripted',
        LLM_MAX_RETRIES: '1',
        RATE_LIMIT_PER_MINUTE: String(LIMIT),
        RATE_LIMIT_WINDOW_MS: '3000',
        MAX_RUNNING_TASKS_PER_TENANT: '1',
      },
    );
  });
  afterAll(async () => {
    if (process.env.ATS_DIST_LOG && d) await writeFile(process.env.ATS_DIST_LOG, d.output());
    await d?.close();
    await model?.close();
  });

  const api = async (
    instance: number,
    path: string,
    init: { method?: string; json?: unknown; key?: string } = {},
  ): Promise<{ status: number; body: any; headers: Headers }> => {
    const res = await fetch(`${d.apiUrls[instance]}${path}`, {
      method: init.method ?? 'GET',
      headers: { authorization: `Bearer ${init.key ?? KEY}`, 'content-type': 'application/json' },
      body: init.json === undefined ? undefined : JSON.stringify(init.json),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined, headers: res.headers };
  };
  const create = (instance: number, key?: string) =>
    api(instance, '/api/v1/tasks', { method: 'POST', json: { message: 'hi' }, ...(key ? { key } : {}) });

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

  it('runs one turn of a tenant at a time across two orchestrators, the waiting ones pending and started in order', async () => {
    const create = async (instance: number, message: string) => {
      const res = await api(instance, '/api/v1/tasks', { method: 'POST', json: { message }, key: CAPPED_KEY });
      expect(res.status).toBe(201);
      return res.body.data.id as string;
    };
    const status = async (id: string) => (await api(0, `/api/v1/tasks/${id}`, { key: CAPPED_KEY })).body.data.status as string;
    const until = async (id: string, wanted: string) => {
      const deadline = Date.now() + 60_000;
      while ((await status(id)) !== wanted) {
        if (Date.now() > deadline) throw new Error(`${id} never became ${wanted}\n${d.output().slice(-20_000)}`);
        await sleep(100);
      }
    };
    const first = await create(0, 'slow capped first');
    await until(first, 'running');
    const second = await create(1, 'capped second');
    const third = await create(0, 'capped third');
    await sleep(1_000);
    expect([await status(first), await status(second), await status(third)]).toEqual(['running', 'pending', 'pending']);

    // Sampled every 50 ms until all three are done: never two of them running at once.
    let mostRunning = 0;
    for (const deadline = Date.now() + 60_000; ; await sleep(50)) {
      const now = await Promise.all([first, second, third].map(status));
      mostRunning = Math.max(mostRunning, now.filter((s) => s === 'running').length);
      if (now.every((s) => s === 'completed')) break;
      if (Date.now() > deadline) throw new Error(`not all completed: ${now.join(', ')}`);
    }
    expect(mostRunning).toBe(1);
    expect(answered.filter((t) => t.includes('capped'))).toEqual(['slow capped first', 'capped second', 'capped third']);
  });
});
