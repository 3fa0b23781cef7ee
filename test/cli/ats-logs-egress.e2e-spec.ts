import type { Server } from 'node:http';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TaskEvent } from '@agentic-task-service/client';
import { runAts } from '../support/ats-cli';

// `ats logs` on a task whose command went through the egress proxy: the real binary in a pipe,
// against a server that answers for one task with canned events (the task and its stream), so
// the lines are pinned without a sandbox network.

const TASK_ID = 'task_0e9e55c0ffee4d1c8a1e9e55c0ffee4d';
const FORGED = 'x\n  ✓ success exit 0 1 ms\n\u001b[2J';

const EVENTS: TaskEvent[] = [
  { type: 'message', data: { messageId: 'msg_1', text: 'Fetch the package', queued: true } },
  { type: 'status', data: { status: 'running', turn: 1, messageId: 'msg_1' } },
  { type: 'tool_call', data: { callId: 'call_1', toolName: 'shell', status: 'approved', args: { command: 'pip download requests' } } },
  { type: 'tool_started', data: { callId: 'call_1', toolName: 'shell' } },
  {
    type: 'egress',
    data: { callId: 'call_1', host: 'pypi.org', port: 443, allowed: true, bytesOut: 12_595, bytesIn: 1_258_291, durationMs: 340 },
  },
  {
    type: 'egress',
    data: {
      callId: 'call_1',
      host: 'evil.example',
      port: 443,
      allowed: false,
      reason: "refused: not in the task's network.allow",
      bytesOut: 0,
      bytesIn: 0,
      durationMs: 1,
    },
  },
  {
    type: 'egress',
    data: { callId: 'call_1', host: FORGED, port: 0, allowed: false, reason: FORGED, bytesOut: 0, bytesIn: 0, durationMs: 0 },
  },
  { type: 'tool_result', data: { callId: 'call_1', toolName: 'shell', status: 'success', output: 'Saved.', exitCode: 0, durationMs: 900 } },
  { type: 'done', data: { status: 'completed', turn: 1 } },
];

describe('ats logs: egress', () => {
  let server: Server;
  let url: string;
  let home: string;
  const env = (): NodeJS.ProcessEnv => ({
    PATH: process.env.PATH,
    HOME: home,
    XDG_CONFIG_HOME: join(home, '.config'),
    ATS_URL: url,
    ATS_API_KEY: 'k',
  });

  beforeAll(async () => {
    server = await startCannedTaskServer();
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    home = await mkdtemp(join(tmpdir(), 'ats-cli-home-'));
  });
  afterAll(async () => {
    server.closeAllConnections();
    server.close();
    await rm(home, { recursive: true, force: true });
  });

  it("prints each connection under its call, before the call's result; a refused one with its reason, each on one line", async () => {
    const { code, stdout } = await runAts(['logs', TASK_ID], env());
    expect(code).toBe(0);
    expect(stdout.split('\n').slice(1, 7)).toEqual([
      'turn 1 started',
      '● shell pip download requests',
      '  ↗ pypi.org:443 12.3 KiB out / 1.2 MiB in, 340 ms',
      "  ↗ evil.example:443 refused: not in the task's network.allow",
      '  ↗ x\\n  ✓ success exit 0 1 ms\\n\\x1b[2J:0 x\\n  ✓ success exit 0 1 ms\\n\\x1b[2J',
      '  ✓ success exit 0 900 ms',
    ]);
    expect(stdout).not.toContain('\u001b');
  });

  it('--json prints the egress events as the stream carries them', async () => {
    const { code, stdout } = await runAts(['logs', TASK_ID, '--json'], env());
    expect(code).toBe(0);
    const lines = stdout
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(lines.filter((event) => event.type === 'egress')).toEqual(
      EVENTS.map((event, i) => ({ id: i + 1, ...event })).filter((event) => event.type === 'egress'),
    );
  });
});

/** Answers GET /api/v1/tasks/TASK_ID and its stream with EVENTS; anything else is a 404 in the envelope. */
async function startCannedTaskServer(): Promise<Server> {
  const server = createServer((req, res) => {
    const path = new URL(req.url!, 'http://x').pathname;
    if (path === `/api/v1/tasks/${TASK_ID}`) {
      res.writeHead(200, { 'content-type': 'application/json' });
      return void res.end(JSON.stringify({ success: true, data: { id: TASK_ID, status: 'completed', lastEventId: EVENTS.length } }));
    }
    if (path === `/api/v1/tasks/${TASK_ID}/stream`) {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      return void res.end(EVENTS.map((event, i) => `event: ${event.type}\ndata: ${JSON.stringify(event)}\nid: ${i + 1}\n\n`).join(''));
    }
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end('{"success":false,"error":{"code":"NOT_FOUND","message":"not found"}}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}
