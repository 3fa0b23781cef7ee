import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SecretVault, SecretsKeyring, TaskSecrets, newId } from '@app/common';
import { SUBJECTS } from '@app/contracts';
import { InProcessBus } from '@app/bus';
import { EventStore, createEmbeddedEventStore } from '@app/event-store';
import { OpenAiChatProvider } from '@app/model-provider';
import { ScriptedOpenAiServer, startScriptedOpenAiServer } from '@app/model-provider/testing/scripted-openai-server';
import { TaskCommandExecutor } from '@app/task-commands';
import { AgentStep } from './agent-step';
import { INTERRUPTED_OUTPUT } from './next-action';

describe('AgentStep after a crash (embedded store on a real DATA_DIR)', () => {
  let dir: string;
  let store: EventStore;
  let model: ScriptedOpenAiServer;
  let bus: InProcessBus;
  let executed: string[];

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ats-agent-step-'));
    store = await createEmbeddedEventStore({ dataDir: join(dir, 'eventstore') });
    model = await startScriptedOpenAiServer();
  });
  afterAll(async () => {
    await store.close();
    await model.close();
    await rm(dir, { recursive: true, force: true });
  });
  beforeEach(() => {
    executed = [];
    bus = new InProcessBus();
    bus.handle(SUBJECTS.sandboxListTools, async () => []);
    bus.handle(SUBJECTS.sandboxExecuteTool, async (req: { callId: string }) => {
      executed.push(req.callId);
      return { status: 'success', output: 'ran', durationMs: 1 };
    });
  });

  const newStep = (commands: TaskCommandExecutor) =>
    new AgentStep(commands, new OpenAiChatProvider({ baseUrl: model.url, model: 'm', name: 'scripted', maxRetries: 0 }), bus, new TaskSecrets(new SecretVault(), new SecretsKeyring(undefined)), {
      maxStepsPerTurn: 10,
      toolTimeoutMs: 5000,
      approvalTimeoutMs: 60_000,
    });

  async function runUntilSettled(step: AgentStep, taskId: string): Promise<void> {
    for (let i = 0; i < 50; i++) {
      const outcome = await step.run(taskId, new AbortController().signal);
      if (outcome !== 'continue') return;
    }
    throw new Error('loop did not settle');
  }

  /** A task whose model has requested one auto-approved call that has not started yet. */
  async function taskWithApprovedCall(commands: TaskCommandExecutor): Promise<{ taskId: string; callId: string }> {
    const taskId = newId('task');
    const callId = newId('call');
    await commands.execute(taskId, {
      type: 'CreateTask',
      data: { taskId, tenantId: 't', messageId: newId('msg'), text: 'go', autoExecute: true, showInHistory: true, env: {}, secretNames: [], files: [] },
    });
    await commands.execute(taskId, { type: 'StartTurn', data: {} });
    await commands.execute(taskId, {
      type: 'RecordModelResponse',
      data: { turn: 1, step: 1, text: '', toolCalls: [{ callId, toolName: 'list_files', args: {} }], usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2 }, model: 'm', finishReason: 'tool_calls' },
    });
    return { taskId, callId };
  }

  it('reports a started but unfinished tool call as interrupted and never runs it again', async () => {
    const commands = new TaskCommandExecutor(store);
    const { taskId, callId } = await taskWithApprovedCall(commands);
    // The previous process recorded the start, then died before the result.
    await commands.execute(taskId, { type: 'StartToolCall', data: { callId } });
    model.script({ text: 'I will check the workspace.' });

    await runUntilSettled(newStep(commands), taskId);

    expect(executed).toEqual([]);
    const { events, state } = await commands.load(taskId);
    const finished = events.find((e) => e.type === 'ToolCallFinished')!.data as { callId: string; status: string; output: string };
    expect(finished).toMatchObject({ callId, status: 'error', output: INTERRUPTED_OUTPUT });
    expect(state.exists && state.status).toBe('completed');
    const toolMessage = model.requests.at(-1)!.messages!.find((m) => m.role === 'tool');
    expect(toolMessage).toMatchObject({ tool_call_id: callId });
    expect(toolMessage!.content).toContain('Interrupted');
  });

  it('leaves a task on another turn alone: a step asked for turn 2 of a task on turn 1 does nothing', async () => {
    const commands = new TaskCommandExecutor(store);
    const { taskId } = await taskWithApprovedCall(commands);
    const before = (await commands.load(taskId)).events.length;

    await expect(newStep(commands).run(taskId, new AbortController().signal, 2)).resolves.toBe('idle');

    expect(executed).toEqual([]);
    expect((await commands.load(taskId)).events).toHaveLength(before);
    // Asked for the turn it is on, the same step runs the call.
    await expect(newStep(commands).run(taskId, new AbortController().signal, 1)).resolves.toBe('continue');
    expect(executed).toHaveLength(1);
  });

  it('resumes an approved call that had not started yet by running it exactly once', async () => {
    const commands = new TaskCommandExecutor(store);
    const { taskId, callId } = await taskWithApprovedCall(commands);
    model.script({ text: 'done' });

    await runUntilSettled(newStep(commands), taskId);

    expect(executed).toEqual([callId]);
    const types = (await commands.load(taskId)).events.map((e) => e.type);
    expect(types.filter((t) => t === 'ToolCallStarted')).toHaveLength(1);
    expect(types.at(-1)).toBe('TurnCompleted');
  });
});
