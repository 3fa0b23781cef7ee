import type { INestApplicationContext } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TaskSecrets, newId } from '@app/common';
import type { MessageBus } from '@app/bus';
import { MESSAGE_BUS } from '@app/bus';
import { BUILT_IN_MODEL_PRICES } from '@app/model-provider';
import { OpenAiChatProvider } from '@app/model-provider/openai-compatible/openai-chat.provider';
import type { ScriptedOpenAiServer } from '@app/model-provider/testing/scripted-openai-server';
import { startScriptedOpenAiServer } from '@app/model-provider/testing/scripted-openai-server';
import { RuntimeModule } from '@app/runtime';
import { TaskCommandExecutor } from '@app/task-commands';
import { SandboxModule } from '../../../sandbox/src/sandbox.module';
import { AgentStep } from './agent-step';
import { INTERRUPTED_OUTPUT } from './next-action';
import { workspaceOf } from '../../../../test/support/workspaces';

// The real sandbox service (bubblewrap, as the all-in-one mode wires it) answers the step's tool
// calls over the in-process bus, on an embedded store in a real DATA_DIR. A call that runs leaves
// a line in its workspace's runs.txt: what ran is read from there, not from a stand-in's log.
const RUN_ONCE = 'echo ran >> runs.txt';

describe('AgentStep after a crash (embedded store on a real DATA_DIR, the real sandbox service)', () => {
  let dir: string;
  let app: INestApplicationContext;
  let model: ScriptedOpenAiServer;
  let bus: MessageBus;
  let commands: TaskCommandExecutor;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ats-agent-step-'));
    model = await startScriptedOpenAiServer();
    const env = { PATH: process.env.PATH, DATA_DIR: dir };
    const runtime = RuntimeModule.forRoot(env, { generateSecretsKey: true });
    const moduleRef = await Test.createTestingModule({ imports: [runtime, SandboxModule] }).compile();
    app = await moduleRef.init();
    bus = app.get(MESSAGE_BUS);
    commands = app.get(TaskCommandExecutor);
  }, 120_000); // the embedded store and the sandbox's adapters take tens of seconds on a loaded machine
  afterAll(async () => {
    await app?.close();
    await model.close();
    await rm(dir, { recursive: true, force: true });
  });

  /** The lines the task's command left in its workspace: one per run. */
  const runs = async (taskId: string) => {
    const text = await readFile(join(workspaceOf(dir, taskId), 'runs.txt'), 'utf8').catch(() => '');
    return text.split('\n').filter(Boolean).length;
  };

  const newStep = (commands: TaskCommandExecutor) =>
    new AgentStep(
      commands,
      new OpenAiChatProvider({ baseUrl: model.url, model: 'm', name: 'scripted', maxRetries: 0 }),
      bus,
      app.get(TaskSecrets),
      {
        maxStepsPerTurn: 10,
        toolTimeoutMs: 5000,
        approvalTimeoutMs: 60_000,
        modelPrices: BUILT_IN_MODEL_PRICES,
      },
    );

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
      data: {
        taskId,
        tenantId: 't',
        messageId: newId('msg'),
        text: 'go',
        autoExecute: true,
        showInHistory: true,
        env: {},
        secretNames: [],
        files: [],
      },
    });
    await commands.execute(taskId, { type: 'StartTurn', data: {} });
    await commands.execute(taskId, {
      type: 'RecordModelResponse',
      data: {
        turn: 1,
        step: 1,
        text: '',
        toolCalls: [{ callId, toolName: 'shell', args: { command: RUN_ONCE } }],
        usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2 },
        model: 'm',
        finishReason: 'tool_calls',
      },
    });
    return { taskId, callId };
  }

  it('reports a started but unfinished tool call as interrupted and never runs it again', async () => {
    const { taskId, callId } = await taskWithApprovedCall(commands);
    // The previous process recorded the start, then died before the result.
    await commands.execute(taskId, { type: 'StartToolCall', data: { callId } });
    model.script({ text: 'I will check the workspace.' });

    await runUntilSettled(newStep(commands), taskId);

    expect(await runs(taskId)).toBe(0);
    const { events, state } = await commands.load(taskId);
    const finished = events.find((e) => e.type === 'ToolCallFinished')!.data as { callId: string; status: string; output: string };
    expect(finished).toMatchObject({ callId, status: 'error', output: INTERRUPTED_OUTPUT });
    expect(state.exists && state.status).toBe('completed');
    const toolMessage = model.requests.at(-1)!.messages!.find((m) => m.role === 'tool');
    expect(toolMessage).toMatchObject({ tool_call_id: callId });
    expect(toolMessage!.content).toContain('Interrupted');
  });

  it('leaves a task on another turn alone: a step asked for turn 2 of a task on turn 1 does nothing', async () => {
    const { taskId } = await taskWithApprovedCall(commands);
    const before = (await commands.load(taskId)).events.length;

    await expect(newStep(commands).run(taskId, new AbortController().signal, 2)).resolves.toBe('idle');

    expect(await runs(taskId)).toBe(0);
    expect((await commands.load(taskId)).events).toHaveLength(before);
    // Asked for the turn it is on, the same step runs the call.
    await expect(newStep(commands).run(taskId, new AbortController().signal, 1)).resolves.toBe('continue');
    expect(await runs(taskId)).toBe(1);
  });

  it('resumes an approved call that had not started yet by running it exactly once', async () => {
    const { taskId, callId } = await taskWithApprovedCall(commands);
    model.script({ text: 'done' });

    await runUntilSettled(newStep(commands), taskId);

    expect(await runs(taskId)).toBe(1);
    const finished = (await commands.load(taskId)).events.find((e) => e.type === 'ToolCallFinished')!.data;
    expect(finished).toMatchObject({ callId, status: 'success' });
    const types = (await commands.load(taskId)).events.map((e) => e.type);
    expect(types.filter((t) => t === 'ToolCallStarted')).toHaveLength(1);
    expect(types.at(-1)).toBe('TurnCompleted');
  });
});
