import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TaskStreamEvent } from '@agentic-task-service/client';
import { AtsClient } from '@agentic-task-service/client';
import type { ScriptedOpenAiServer } from '@app/model-provider/testing/scripted-openai-server';
import { startScriptedOpenAiServer } from '@app/model-provider/testing/scripted-openai-server';
import type { ServiceProcess } from '../../../test/support/service-process';
import { freePort, startServiceProcess } from '../../../test/support/service-process';

jest.setTimeout(120_000);

const API_KEY = 'logs-key';
const TOKEN = 'logs-canary-5d1e0b7a-secret';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

interface LogLine {
  readonly level: string;
  readonly time: string;
  readonly service: string;
  readonly msg: string;
  readonly context?: string;
  readonly taskId?: string;
  readonly turn?: number;
  readonly callId?: string;
  readonly requestId?: string;
  readonly [field: string]: unknown;
}

// The compiled service as `npm start` runs it, its stdout a pipe (as under systemd or Docker):
// the default format is then JSON lines, and LOG_LEVEL=debug makes the per-request and per-step lines appear.
describe('The service logs JSON lines carrying the task, turn, call and request they belong to', () => {
  let dataDir: string;
  let model: ScriptedOpenAiServer;
  let service: ServiceProcess | undefined;
  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'ats-logs-'));
    model = await startScriptedOpenAiServer();
  });
  afterAll(async () => {
    if (service) await service.stop();
    await model.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('runs a task with a secret and writes only JSON lines, with its ids where they belong and never the secret', async () => {
    const env = { DATA_DIR: dataDir, API_KEYS: API_KEY, LLM_BASE_URL: model.url, LLM_MODEL: 'scripted', LOG_LEVEL: 'debug' };
    service = await startServiceProcess(env, await freePort());
    model.script(
      { text: `using ${TOKEN}`, toolCalls: [{ name: 'shell', arguments: { command: 'echo "token: $TOKEN"' } }] },
      { text: 'Done.' },
    );
    const created = await fetch(`${service.url}/api/v1/tasks`, {
      method: 'POST',
      headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json', 'x-request-id': 'logs-e2e-create' },
      body: JSON.stringify({ message: 'print the token', secrets: { TOKEN } }),
    });
    expect(created.status).toBe(201);
    expect(created.headers.get('x-request-id')).toBe('logs-e2e-create');
    const { id } = ((await created.json()) as { data: { id: string } }).data;

    const client = new AtsClient({ baseUrl: service.url, apiKey: API_KEY });
    const events: TaskStreamEvent[] = [];
    for await (const event of client.tasks.stream(id)) events.push(event);
    expect(events.at(-1)).toMatchObject({ type: 'done', data: { status: 'completed', turn: 1 } });
    const result = events.find((e) => e.type === 'tool_result');
    expect(result?.data).toMatchObject({ status: 'success', output: 'token: [REDACTED:TOKEN]\n' });
    // A query never reaches the log (it may hold anything); a request without an id gets a UUID.
    const read = await fetch(`${service.url}/api/v1/tasks/${id}?probe=${TOKEN}`, { headers: { authorization: `Bearer ${API_KEY}` } });
    expect(read.status).toBe(200);
    const readRequestId = read.headers.get('x-request-id');
    expect(readRequestId).toMatch(UUID);
    // A stream (a hijacked reply) and a URL refused before routing carry one too.
    const stream = await fetch(`${service.url}/api/v1/tasks/${id}/stream`, { headers: { authorization: `Bearer ${API_KEY}` } });
    expect(stream.headers.get('x-request-id')).toMatch(UUID);
    expect(await stream.text()).toContain('event: done');
    const badUrl = await fetch(`${service.url}/api/v1/tasks/%zz`, { headers: { authorization: `Bearer ${API_KEY}` } });
    expect(badUrl.status).toBe(400);
    expect(badUrl.headers.get('x-request-id')).toMatch(UUID);
    await service.stop();

    const stdout = service.stdout();
    const rawLines = stdout.split('\n').filter((line) => line.length > 0);
    const lines = rawLines.map((line) => {
      try {
        return JSON.parse(line) as LogLine;
      } catch {
        throw new Error(`not a JSON line: ${line}`);
      }
    });
    for (const line of lines) {
      expect(line).toMatchObject({ level: expect.any(String), time: expect.any(String), service: 'standalone', msg: expect.any(String) });
    }
    // Boot and shutdown lines belong to no task and no request.
    expect(lines.find((l) => l.msg.startsWith('listening on'))).not.toHaveProperty('taskId');

    // Every line that names the task carries its id as a field.
    const naming = lines.filter((l) => JSON.stringify(l.msg).includes(id));
    for (const line of naming) expect({ msg: line.msg, taskId: line.taskId }).toEqual({ msg: line.msg, taskId: id });
    const ofTask = lines.filter((l) => l.taskId === id);
    // The agent loop's steps (with their turn) and the sandbox's run of the call (with call and turn).
    expect(ofTask.filter((l) => l.context === 'AgentStep' && l.turn === 1).map((l) => l.msg)).toEqual(
      expect.arrayContaining(['next: start_turn', 'next: call_model (step 1)', 'next: call_model (step 2)']),
    );
    const call = events.find((e) => e.type === 'tool_call');
    const callId = call?.type === 'tool_call' ? call.data.callId : 'no call';
    expect(ofTask.find((l) => l.context === 'AgentStep' && l.msg === `next: execute_tool ${callId}`)).toBeDefined();
    expect(ofTask.find((l) => l.context === 'Sandbox' && l.msg.startsWith(`shell (${callId}) ended: success`))).toMatchObject({
      callId,
      turn: 1,
    });
    // The requests: the create's line has the caller's id and the new task; the read's the generated id, its path without the query.
    expect(lines.find((l) => l.context === 'Http' && l.requestId === 'logs-e2e-create')).toMatchObject({
      level: 'debug',
      msg: expect.stringMatching(/^POST \/api\/v1\/tasks 201 in \d+ ms$/),
      taskId: id,
      method: 'POST',
      route: '/api/v1/tasks',
      status: 201,
    });
    expect(lines.find((l) => l.context === 'Http' && l.requestId === readRequestId)).toMatchObject({
      msg: expect.stringMatching(new RegExp(`^GET /api/v1/tasks/${id} 200 in \\d+ ms$`)),
      taskId: id,
      route: '/api/v1/tasks/:id',
    });
    // Nowhere the secret, in any form the redaction knows.
    for (const form of [TOKEN, Buffer.from(TOKEN).toString('base64'), encodeURIComponent(TOKEN)]) expect(stdout).not.toContain(form);
  });
});
