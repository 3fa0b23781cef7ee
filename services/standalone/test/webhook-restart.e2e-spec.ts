import { randomBytes } from 'node:crypto';
import type { IncomingHttpHeaders, IncomingMessage, Server, ServerResponse } from 'node:http';
import { createServer } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import type { ScriptedOpenAiServer } from '@app/model-provider/testing/scripted-openai-server';
import { startScriptedOpenAiServer } from '@app/model-provider/testing/scripted-openai-server';
import { freePort, startServiceProcess } from '../../../test/support/service-process';

jest.setTimeout(120_000);

const SECRET = `whsec_${randomBytes(32).toString('base64')}`;

/** A receiver on a fixed port, so that it can be down first and come up at the same address later. */
async function receiverOn(port: number, received: { headers: IncomingHttpHeaders; body: string }[]): Promise<Server> {
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
    res.writeHead(204).end();
  };
  // Node's http server ignores a handler's promise; a failure still surfaces as an unhandled rejection.
  const server = createServer((req, res) => void handle(req, res));
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return server;
}

async function until<T>(probe: () => Promise<T | undefined>, what: string, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('A webhook across a crash (kill -9) and restart on the same DATA_DIR', () => {
  let dataDir: string;
  let model: ScriptedOpenAiServer;
  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'ats-webhook-restart-'));
    model = await startScriptedOpenAiServer();
  });
  afterAll(async () => {
    await model.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('is delivered after the restart when the receiver was down before the crash, with the same webhook-id', async () => {
    const receiverPort = await freePort();
    const env = {
      DATA_DIR: dataDir,
      API_KEYS: 'restart-key',
      LLM_BASE_URL: model.url,
      LLM_MODEL: 'scripted',
      WEBHOOK_SECRET: SECRET,
      WEBHOOK_ALLOW_HOSTS: `127.0.0.1:${receiverPort}`,
      // Long enough that the retry is still ahead when the service is killed.
      WEBHOOK_RETRY_BASE_MS: '3000',
      WEBHOOK_MAX_ATTEMPTS: '5',
      WEBHOOK_TIMEOUT_MS: '1000',
    };
    const auth = { authorization: 'Bearer restart-key', 'content-type': 'application/json' };
    const port = await freePort();
    model.script({ text: 'done before the crash' });
    const deliveriesOf = async (url: string, id: string) =>
      ((await (await fetch(`${url}/api/v1/tasks/${id}/webhook-deliveries`, { headers: auth })).json()) as any).data.deliveries;

    const first = await startServiceProcess(env, port);
    let id: string;
    try {
      const created = await fetch(`${first.url}/api/v1/tasks`, {
        method: 'POST',
        headers: auth,
        body: JSON.stringify({ message: 'tell me when done', webhookUrl: `http://127.0.0.1:${receiverPort}/hook` }),
      });
      id = ((await created.json()) as any).data.id;
      // Nobody listens yet: the first attempt fails and the next is scheduled seconds ahead.
      const [pending] = await until(async () => {
        const d = await deliveriesOf(first.url, id);
        return d[0]?.attempts.length === 1 ? d : undefined;
      }, `the first attempt:\n${first.output()}`);
      expect(pending.status).toBe('pending');
      expect(pending.attempts[0].error).toMatch(/could not deliver/);
      expect(Date.parse(pending.nextAttemptAt)).toBeGreaterThan(Date.now());
    } finally {
      await first.kill9();
    }

    const received: { headers: IncomingHttpHeaders; body: string }[] = [];
    const receiver = await receiverOn(receiverPort, received);
    const second = await startServiceProcess(env, port);
    try {
      const [delivery] = await until(async () => {
        const d = await deliveriesOf(second.url, id);
        return d[0]?.status === 'delivered' ? d : undefined;
      }, `the delivery after the restart:\n${second.output()}`);
      expect(delivery.attempts).toHaveLength(2);
      expect(received).toHaveLength(1);
      const message = new Webhook(SECRET).verify(received[0].body, received[0].headers as Record<string, string>) as any;
      expect(message).toEqual({
        type: 'task.completed',
        timestamp: expect.any(String),
        data: { taskId: id, status: 'completed', turn: 1 },
      });
      expect(received[0].headers['webhook-id']).toBe(delivery.id);
    } finally {
      await second.stop();
      await new Promise((r) => receiver.close(r));
    }
  });

  it('is sent again at once after a crash during its request: the embedded mode records no claim before the outcome', async () => {
    // In the distributed mode a claim committed before the request holds the message for its lease
    // (WEBHOOK_TIMEOUT_MS + 10 s, here 40 s). The embedded mode's one dispatcher records the claim
    // with the outcome, so a crash mid-request leaves the message simply due.
    const crashDir = await mkdtemp(join(tmpdir(), 'ats-webhook-inflight-'));
    const held: { headers: IncomingHttpHeaders }[] = [];
    const holding = createServer((req) => held.push({ headers: req.headers })); // never answers
    await new Promise<void>((resolve) => holding.listen(0, '127.0.0.1', resolve));
    const receiverPort = (holding.address() as { port: number }).port;
    const env = {
      DATA_DIR: crashDir,
      API_KEYS: 'inflight-key',
      LLM_BASE_URL: model.url,
      LLM_MODEL: 'scripted',
      WEBHOOK_SECRET: SECRET,
      WEBHOOK_ALLOW_HOSTS: `127.0.0.1:${receiverPort}`,
      WEBHOOK_TIMEOUT_MS: '30000',
    };
    const auth = { authorization: 'Bearer inflight-key', 'content-type': 'application/json' };
    const port = await freePort();
    model.script({ text: 'done, then the crash' });
    try {
      const first = await startServiceProcess(env, port);
      try {
        const created = await fetch(`${first.url}/api/v1/tasks`, {
          method: 'POST',
          headers: auth,
          body: JSON.stringify({ message: 'tell me when done', webhookUrl: `http://127.0.0.1:${receiverPort}/hook` }),
        });
        expect(created.status).toBe(201);
        await until(async () => (held.length === 1 ? true : undefined), `the request in flight:\n${first.output()}`);
      } finally {
        await first.kill9();
      }
      const second = await startServiceProcess(env, port);
      try {
        const restartedAt = Date.now();
        await until(async () => (held.length === 2 ? true : undefined), `the request again:\n${second.output()}`, 15_000);
        expect(Date.now() - restartedAt).toBeLessThan(10_000);
        expect(held[1].headers['webhook-id']).toBe(held[0].headers['webhook-id']);
      } finally {
        await second.kill9();
      }
    } finally {
      holding.closeAllConnections();
      await new Promise((r) => holding.close(r));
      await rm(crashDir, { recursive: true, force: true });
    }
  });
});
