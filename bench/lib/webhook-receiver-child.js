// Benchmark 8's webhook receiver, run as its own small process (plain JavaScript, no ts-node): a
// real receiver is another program on another machine, and in the bench process it would share a
// thread, a heap and its garbage collections with the scripted model server and the bench's own
// bookkeeping. It answers every POST 200 and notes when each body had arrived; the parent asks
// over IPC.
//   parent → { expect: { type, taskIds } }: report once a message of that type arrived for each
//   child  → { port } when listening; { complete: true } once the expected messages are in
//   parent → { report: true }; child → { arrivals: [...] } (every message, repeats included)
'use strict';
const { createServer } = require('node:http');
const { performance } = require('node:perf_hooks');

const arrivals = [];
let expected;

function checkComplete() {
  if (!expected) return;
  const seen = new Set();
  for (const a of arrivals) if (a.type === expected.type && expected.taskIds.has(a.taskId)) seen.add(a.taskId);
  if (seen.size < expected.taskIds.size) return;
  expected = undefined;
  process.send({ complete: true });
}

const server = createServer((req, res) => {
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', () => {
    // Epoch ms with sub-ms precision, the same wall clock as the service's recorded times.
    const receivedAtMs = performance.timeOrigin + performance.now();
    res.writeHead(200).end();
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    arrivals.push({
      webhookId: String(req.headers['webhook-id']),
      taskId: body.data.taskId,
      type: body.type,
      recordedAtMs: Date.parse(body.timestamp),
      receivedAtMs,
    });
    checkComplete();
  });
});

process.on('message', (message) => {
  if (message.warmUp) {
    warmUp(message.warmUp).then(() => process.send({ warm: true }));
  } else if (message.expect) {
    expected = { type: message.expect.type, taskIds: new Set(message.expect.taskIds) };
    checkComplete();
  } else if (message.report) {
    process.send({ arrivals });
  }
});
/**
 * Runs `count` POSTs through this receiver from inside this process, then forgets them: its HTTP
 * code is compiled and optimized before the benchmark, as in a receiver that has been serving.
 */
async function warmUp(count) {
  const { request } = require('node:http');
  const agent = new (require('node:http').Agent)({ keepAlive: true, maxSockets: 4 });
  const body = JSON.stringify({ type: 'warm-up', timestamp: new Date().toISOString(), data: { taskId: 'warm-up' } });
  const one = () =>
    new Promise((resolve, reject) => {
      const req = request(
        {
          host: '127.0.0.1',
          port: server.address().port,
          method: 'POST',
          path: '/hook',
          agent,
          headers: { 'webhook-id': 'warm-up', 'content-type': 'application/json' },
        },
        (res) => {
          res.resume();
          res.on('end', resolve);
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  for (let i = 0; i < count; i += 50) await Promise.all(Array.from({ length: 50 }, one));
  agent.destroy();
  arrivals.length = 0;
}

process.on('disconnect', () => process.exit(0));
server.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }));
