import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { WebhookSender } from '@app/webhooks';
import { median } from './lib/stats';

// A diagnostic, not part of `npm run bench`: the main-thread CPU one webhook send costs the
// service (WebhookSender: signing, deadline, undici, reading the answer), in bursts of 100 sent
// at once, as benchmark 8's burst does, on new sockets and on pooled ones, next to a bare
// undici.request. The receiver runs in its own process, so its CPU is not counted.
//   npx ts-node --transpile-only -r tsconfig-paths/register bench/webhook-send-cost.ts [rounds]

const RECEIVER = `
const server = require('node:http').createServer((req, res) => { req.resume(); req.on('end', () => res.writeHead(200).end()); });
server.listen(0, '127.0.0.1', () => console.log(server.address().port));`;

const BURST = 100;
/** As benchmark 8's warm-up round leaves them: the burst's first 10 sends find a pooled socket. */
const WARM_SOCKETS = 10;

async function main(): Promise<void> {
  const rounds = Number(process.argv[2] ?? 10);
  const receiver = spawn(process.execPath, ['-e', RECEIVER], { stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    const port = await new Promise<number>((resolve) => receiver.stdout!.once('data', (chunk: Buffer) => resolve(Number(String(chunk)))));
    const url = new URL(`http://127.0.0.1:${port}/hook`);
    const body = JSON.stringify({
      type: 'task.completed',
      timestamp: new Date().toISOString(),
      data: { taskId: 'task_x', status: 'completed', turn: 1 },
    });
    const cpuPerCall = async (n: number, call: (i: number) => Promise<unknown>) => {
      const before = process.cpuUsage();
      await Promise.all(Array.from({ length: n }, (_, i) => call(i)));
      const used = process.cpuUsage(before);
      return (used.user + used.system) / n;
    };

    const figures = { senderNew: [] as number[], senderPooled: [] as number[], bareNew: [] as number[], barePooled: [] as number[] };
    const { Agent, request } = await import('undici');
    for (let round = 0; round < rounds; round++) {
      const sender = new WebhookSender(
        { timeoutMs: 10_000, allowHosts: new Set([`127.0.0.1:${port}`]), maxConnections: 8 },
        randomBytes(32),
      );
      const send = async (i: number) => {
        const { delivered, attempt } = await sender.send({ id: `wh_${round}_${i}`, url, body });
        if (!delivered) throw new Error(`not delivered: ${attempt.error}`);
      };
      await cpuPerCall(WARM_SOCKETS, send);
      figures.senderNew.push(await cpuPerCall(BURST, send));
      figures.senderPooled.push(await cpuPerCall(BURST, send));
      await sender.close();

      const agent = new Agent();
      const bare = async () => {
        const response = await request(url, { method: 'POST', body, dispatcher: agent, headers: { 'content-type': 'application/json' } });
        await response.body.dump();
      };
      await cpuPerCall(WARM_SOCKETS, bare);
      figures.bareNew.push(await cpuPerCall(BURST, bare));
      figures.barePooled.push(await cpuPerCall(BURST, bare));
      await agent.close();
    }
    const us = (values: number[]) =>
      `${median(values).toFixed(0)} µs (${Math.min(...values).toFixed(0)}–${Math.max(...values).toFixed(0)})`;
    console.log(`main-thread CPU per send, bursts of ${BURST}, median (min–max) of ${rounds} rounds:`);
    console.log(`  WebhookSender, ${BURST - WARM_SOCKETS} new sockets: ${us(figures.senderNew)}; all pooled: ${us(figures.senderPooled)}`);
    console.log(
      `  bare undici.request, ${BURST - WARM_SOCKETS} new sockets: ${us(figures.bareNew)}; all pooled: ${us(figures.barePooled)}`,
    );
  } finally {
    receiver.kill();
  }
}

void main();
