import type { PrivateNatsServer } from '@app/bus/testing/nats-server';
import { startPrivateNatsServer } from '@app/bus/testing/nats-server';
import type { ScriptedOpenAiServer } from '@app/model-provider/testing/scripted-openai-server';
import { startScriptedOpenAiServer } from '@app/model-provider/testing/scripted-openai-server';
import type { DistributedDeployment } from '../support/distributed-deployment';
import { startDistributedDeployment } from '../support/distributed-deployment';
import { pollDeployment } from '../support/distributed-reads';
import type { OtlpReceiver, ReceivedSpan } from '../support/otlp/otlp-receiver';
import { startOtlpReceiver } from '../support/otlp/otlp-receiver';

// Every process of the distributed mode exports its spans over OTLP to a receiver of the test's
// own. One turn of a task with a tool call is one trace: from the API's request through NATS and
// Temporal to the orchestrator's model call and the sandbox's tool run, each span under its
// parent, and none quoting the prompt, the tool's arguments or a secret.

jest.setTimeout(300_000);

const KEY = 'traces-key';
const PROMPT = 'prompt-text-that-must-stay-out-of-spans';
const SECRET = 'secret-value-that-must-stay-out-of-spans';
const FILE_CONTENT = 'tool-argument-that-must-stay-out-of-spans';
const HEADERS = { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' };
/** The trace id a caller of the API sends in its own `traceparent`. */
const CALLER_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';

describe('Traces of the distributed mode', () => {
  let receiver: OtlpReceiver;
  let model: ScriptedOpenAiServer;
  let nats: PrivateNatsServer;
  let d: DistributedDeployment;

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    model = await startScriptedOpenAiServer();
    nats = await startPrivateNatsServer();
    d = await startDistributedDeployment(
      { api: 1, orchestrator: 1, sandbox: 1, artifacts: 1 },
      {
        NATS_URL: nats.url,
        API_KEYS: KEY,
        LLM_BASE_URL: model.url,
        LLM_MODEL: 'scripted',
        LLM_MAX_RETRIES: '1',
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
        // Batches leave every 100 ms instead of 5 s: the test waits less for them.
        OTEL_BSP_SCHEDULE_DELAY: '100',
      },
    );
  });
  afterAll(async () => {
    await d?.close();
    await model?.close();
    await nats?.dispose();
    await receiver?.close();
  });

  const api = async (path: string, json?: unknown) => {
    const res = await fetch(`${d.apiUrls[0]}${path}`, {
      method: json === undefined ? 'GET' : 'POST',
      headers: HEADERS,
      body: json === undefined ? undefined : JSON.stringify(json),
    });
    return (await res.json()) as any;
  };

  /** The spans of a trace while any of them has a parent not (yet) received. */
  const incomplete = (spans: ReceivedSpan[]) => {
    const ids = new Set(spans.map((s) => s.spanId));
    return spans.filter((s) => s.parentSpanId !== '' && !ids.has(s.parentSpanId));
  };

  /**
   * The trace under the API's `root` request span, once it is whole: the turn's workflow span
   * (exported when the turn ends), the spans named `expected`, and every span's parent received.
   */
  const wholeTrace = async (root: string, expected: string[]): Promise<ReceivedSpan[]> => {
    const request = await pollDeployment(d, `the span of ${root}`, async () =>
      receiver.spans.find((s) => s.service === 'api' && s.name === root),
    );
    return pollDeployment(
      d,
      `the whole trace of ${root}`,
      async () => {
        const spans = receiver.spans.filter((s) => s.traceId === request.traceId);
        const whole = ['RunWorkflow:agentTurnWorkflow', ...expected].every((name) => spans.some((s) => s.name === name));
        return whole && incomplete(spans).length === 0 ? spans : undefined;
      },
      60_000,
    );
  };
  let firstTurn: { taskId: string; traceId: string } | undefined;

  it('traces one turn from the HTTP request to the model call and the tool run, parented, without message text or secrets', async () => {
    model.script({ toolCalls: [{ name: 'write_file', arguments: { path: 'downloads/t.md', content: FILE_CONTENT } }] }, { text: 'Done.' });
    const id = (await api('/api/v1/tasks', { message: PROMPT, secrets: { API_TOKEN: SECRET } })).data.id as string;
    await pollDeployment(d, 'the task to complete', async () =>
      (await api(`/api/v1/tasks/${id}`)).data.status === 'completed' ? true : undefined,
    );

    const trace = await wholeTrace('POST /api/v1/tasks', ['chat scripted', 'execute_tool write_file', 'tool.run']);
    firstTurn = { taskId: id, traceId: trace[0].traceId };

    // The artifacts service hears the turn's append notices too.
    expect([...new Set(trace.map((s) => s.service))]).toEqual(expect.arrayContaining(['api', 'orchestrator', 'sandbox']));
    // One root: the request. Everything else hangs under it.
    expect(trace.filter((s) => s.parentSpanId === '').map((s) => s.name)).toEqual(['POST /api/v1/tasks']);
    const modelCalls = trace.filter((s) => s.name === 'chat scripted');
    expect(modelCalls.map((s) => [s.service, s.attributes['gen_ai.provider.name'], s.attributes['gen_ai.response.model']])).toEqual([
      ['orchestrator', 'openai', 'scripted'],
      ['orchestrator', 'openai', 'scripted'],
    ]);
    const toolRun = trace.find((s) => s.name === 'tool.run')!;
    expect(toolRun).toMatchObject({
      service: 'sandbox',
      attributes: { 'task.id': id, 'tool.name': 'write_file', 'tool.status': 'success' },
    });

    // The tool run's ancestry crosses every hop: the sandbox's handler, the orchestrator's step in
    // its Temporal activity and workflow, the append notice the orchestrator heard, the request.
    const byId = new Map(trace.map((s) => [s.spanId, s]));
    const ancestry: string[] = [];
    for (let s: ReceivedSpan | undefined = toolRun; s; s = byId.get(s.parentSpanId)) ancestry.push(`${s.service} ${s.name}`);
    expect(ancestry).toEqual(
      expect.arrayContaining([
        'orchestrator execute_tool write_file',
        'orchestrator agent.step',
        'orchestrator RunActivity:step',
        'orchestrator RunWorkflow:agentTurnWorkflow',
        'api POST /api/v1/tasks',
      ]),
    );
    expect(ancestry.some((a) => a.startsWith('sandbox bus.handle '))).toBe(true);
    expect(ancestry[ancestry.length - 1]).toBe('api POST /api/v1/tasks');
    expect(ancestry.some((a) => a.startsWith('orchestrator bus.receive'))).toBe(true);

    // No attribute of any span received (every trace, every service) quotes the prompt, the tool's arguments or the secret.
    const everything = JSON.stringify(receiver.spans);
    for (const text of [PROMPT, SECRET, FILE_CONTENT]) expect(everything).not.toContain(text);
  });

  it('traces the next turn of the task, started by a follow-up message, as a trace of its own', async () => {
    const { taskId, traceId } = firstTurn!;
    model.script({ text: 'Again.' });
    await api(`/api/v1/tasks/${taskId}/messages`, { message: `${PROMPT} again` });
    await pollDeployment(d, 'the second turn to complete', async () =>
      (await api(`/api/v1/tasks/${taskId}`)).data.status === 'completed' ? true : undefined,
    );
    const trace = await wholeTrace('POST /api/v1/tasks/:id/messages', ['chat scripted']);
    expect(trace[0].traceId).not.toBe(traceId);
    expect(trace.filter((s) => s.parentSpanId === '').map((s) => s.name)).toEqual(['POST /api/v1/tasks/:id/messages']);
    expect(trace.find((s) => s.name === 'RunWorkflow:agentTurnWorkflow')?.attributes.workflowId).toMatch(/-turn-2$/);
    expect(trace.filter((s) => s.name === 'agent.step').every((s) => s.attributes['task.turn'] === '2')).toBe(true);
    expect(JSON.stringify(receiver.spans)).not.toContain(PROMPT);
  });

  it('keeps a tool run released by an approval in the trace of its turn, which continues the caller traceparent; the approval is a trace of its own', async () => {
    model.script({ toolCalls: [{ name: 'write_file', arguments: { path: 'downloads/a.md', content: FILE_CONTENT } }] }, { text: 'Done.' });
    const created = await fetch(`${d.apiUrls[0]}/api/v1/tasks`, {
      method: 'POST',
      // A caller's own trace: the turn continues it rather than starting one.
      headers: { ...HEADERS, traceparent: `00-${CALLER_TRACE}-00f067aa0ba902b7-01` },
      body: JSON.stringify({ message: PROMPT, autoExecute: false }),
    });
    const id = ((await created.json()) as any).data.id as string;
    const callId = await pollDeployment(
      d,
      'the approval request',
      async () => (await api(`/api/v1/tasks/${id}`)).data.pendingApprovals[0]?.callId,
    );
    await api(`/api/v1/tasks/${id}/tools/${callId}/approve`, { outcome: 'proceed_once' });
    await pollDeployment(d, 'the task to complete', async () =>
      (await api(`/api/v1/tasks/${id}`)).data.status === 'completed' ? true : undefined,
    );

    const toolRun = await pollDeployment(d, 'the tool run', async () =>
      receiver.spans.find((s) => s.name === 'tool.run' && s.attributes['task.id'] === id),
    );
    expect(toolRun.traceId).toBe(CALLER_TRACE);
    const approval = await pollDeployment(d, 'the span of the approval', async () =>
      receiver.spans.find((s) => s.name === 'POST /api/v1/tasks/:id/tools/:callId/approve'),
    );
    expect(approval.traceId).not.toBe(CALLER_TRACE);
    expect(approval.parentSpanId).toBe('');
  });
});
