import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SecretVault, SecretsKeyring, SecretsUnavailableError, TaskSecrets, generateSecretsKey, newId } from '@app/common';
import { SUBJECTS } from '@app/contracts';
import { InProcessBus } from '@app/bus/in-process/in-process-bus';
import type { EventStore } from '@app/event-store';
import { createEmbeddedEventStore } from '@app/event-store/embedded/embedded-event-store';
import { BUILT_IN_MODEL_PRICES } from '@app/model-provider';
import { OpenAiChatProvider } from '@app/model-provider/openai-compatible/openai-chat.provider';
import type { ScriptedOpenAiServer } from '@app/model-provider/testing/scripted-openai-server';
import { startScriptedOpenAiServer } from '@app/model-provider/testing/scripted-openai-server';
import { TaskCommandExecutor } from '@app/task-commands';
import { AgentStep } from './agent-step';

// The agent loop's side of durable secrets, on a real store and bus: a step opens the task's
// sealed secrets with its own key (as after a restart, with an empty vault), and a step that
// cannot open them fails the turn with a clear error before anything runs.

const TOKEN = 'tok-7c1e0d9a-value';

describe('AgentStep and a task’s sealed secrets', () => {
  let dir: string;
  let store: EventStore;
  let model: ScriptedOpenAiServer;
  let bus: InProcessBus;
  let requests: unknown[];
  const key = generateSecretsKey();

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ats-agent-secrets-'));
    store = await createEmbeddedEventStore({ dataDir: join(dir, 'eventstore') });
    model = await startScriptedOpenAiServer();
  });
  afterAll(async () => {
    await store.close();
    await model.close();
    await rm(dir, { recursive: true, force: true });
  });
  beforeEach(() => {
    requests = [];
    bus = new InProcessBus();
    bus.handle(SUBJECTS.sandboxListTools, async (req: unknown) => {
      requests.push(req);
      return [];
    });
    bus.handle(SUBJECTS.sandboxExecuteTool, async (req: unknown) => {
      requests.push(req);
      return { status: 'success', output: `the token is ${TOKEN}`, durationMs: 1 };
    });
  });

  /** A step of a process with a fresh vault (a restart, another instance) and this keyring. */
  const newStep = (commands: TaskCommandExecutor, keyring: SecretsKeyring) =>
    new AgentStep(
      commands,
      new OpenAiChatProvider({ baseUrl: model.url, model: 'm', name: 'scripted', maxRetries: 0 }),
      bus,
      new TaskSecrets(new SecretVault(), keyring),
      {
        maxStepsPerTurn: 10,
        toolTimeoutMs: 5000,
        approvalTimeoutMs: 60_000,
        modelPrices: BUILT_IN_MODEL_PRICES,
      },
    );

  async function createTask(commands: TaskCommandExecutor, sealed: 'sealed' | 'names only'): Promise<string> {
    const taskId = newId('task');
    const sealedSecrets = new SecretsKeyring(key).seal(taskId, { TOKEN });
    await commands.execute(taskId, {
      type: 'CreateTask',
      data: {
        ...{
          taskId,
          tenantId: 't',
          messageId: newId('msg'),
          text: 'go',
          autoExecute: true,
          showInHistory: true,
          env: {},
          secretNames: ['TOKEN'],
          files: [],
        },
        ...(sealed === 'sealed' ? { sealedSecrets } : {}),
      },
    });
    return taskId;
  }

  async function runUntilSettled(step: AgentStep, taskId: string): Promise<void> {
    for (let i = 0; i < 50; i++) {
      if ((await step.run(taskId, new AbortController().signal)) !== 'continue') return;
    }
    throw new Error('loop did not settle');
  }

  const eventsOf = async (commands: TaskCommandExecutor, taskId: string) =>
    (await commands.load(taskId)).events.map((e) => ({ type: e.type, data: e.data as Record<string, any> }));

  it('opens the sealed secrets with its own key: model text and tool output are redacted, no request carries the value', async () => {
    const commands = new TaskCommandExecutor(store);
    const taskId = await createTask(commands, 'sealed');
    model.script({ text: `using ${TOKEN}`, toolCalls: [{ name: 'shell', arguments: { command: 'echo $TOKEN' } }] }, { text: 'done' });

    await runUntilSettled(newStep(commands, new SecretsKeyring(key)), taskId);

    const events = await eventsOf(commands, taskId);
    expect(events.at(-1)!.type).toBe('TurnCompleted');
    expect(events.find((e) => e.type === 'AssistantTextProduced')!.data.text).toBe('using [REDACTED:TOKEN]');
    expect(events.find((e) => e.type === 'ToolCallFinished')!.data.output).toBe('the token is [REDACTED:TOKEN]');
    expect(requests.length).toBeGreaterThan(0);
    expect(JSON.stringify(requests)).not.toContain(TOKEN);
    expect(JSON.stringify(requests)).not.toContain('secrets');
    expect(JSON.stringify(events)).not.toContain(TOKEN);
  });

  it('opens envelopes of a rotated-out key kept in SECRETS_KEY_PREVIOUS', async () => {
    const commands = new TaskCommandExecutor(store);
    const taskId = await createTask(commands, 'sealed');
    model.script({ text: `still ${TOKEN}` });

    await runUntilSettled(newStep(commands, new SecretsKeyring(generateSecretsKey(), [key])), taskId);

    const events = await eventsOf(commands, taskId);
    expect(events.at(-1)!.type).toBe('TurnCompleted');
    expect(events.find((e) => e.type === 'AssistantTextProduced')!.data.text).toBe('still [REDACTED:TOKEN]');
  });

  it.each([
    [
      'a wrong key',
      () => new SecretsKeyring(generateSecretsKey()),
      'sealed' as const,
      /^Secrets TOKEN cannot be opened: they were sealed with key id [0-9a-f]{16}/,
    ],
    [
      'no key',
      () => new SecretsKeyring(undefined),
      'sealed' as const,
      /^Secrets TOKEN cannot be opened: no SECRETS_KEY \(or SECRETS_KEY_FILE\) is set/,
    ],
    [
      'a task from before durable secrets',
      () => new SecretsKeyring(key),
      'names only' as const,
      /^Secrets TOKEN cannot be used: this task was created before secrets were durable/,
    ],
  ])(
    'with %s: fails the turn with a clear error and a notice before the model or any tool is called',
    async (_what, keyring, sealed, message) => {
      const commands = new TaskCommandExecutor(store);
      const taskId = await createTask(commands, sealed);
      const modelCalls = model.requests.length;

      await runUntilSettled(newStep(commands, keyring()), taskId);

      const events = await eventsOf(commands, taskId);
      expect(events.map((e) => e.type)).toEqual(['TaskCreated', 'TurnStarted', 'SecretsUnavailable', 'TaskFailed']);
      expect(events[2].data).toEqual({ names: ['TOKEN'], reason: expect.stringMatching(message) });
      expect(events[3].data.error).toMatch(message);
      expect(events[3].data.error).toContain('The turn stopped so that nothing runs with these variables empty.');
      expect(model.requests.length).toBe(modelCalls);
      expect(requests).toEqual([]);
    },
  );

  it('when the sandbox cannot open them: the call it refused ends with the reason and the turn fails', async () => {
    bus = new InProcessBus();
    bus.handle(SUBJECTS.sandboxListTools, async () => []);
    bus.handle(SUBJECTS.sandboxExecuteTool, async () => {
      throw new SecretsUnavailableError(
        ['TOKEN'],
        'Secrets TOKEN cannot be opened: no SECRETS_KEY (or SECRETS_KEY_FILE) is set on this process.',
      );
    });
    const commands = new TaskCommandExecutor(store);
    const taskId = await createTask(commands, 'sealed');
    model.script({ toolCalls: [{ name: 'shell', arguments: { command: 'echo $TOKEN' } }] });

    await runUntilSettled(newStep(commands, new SecretsKeyring(key)), taskId);

    const events = await eventsOf(commands, taskId);
    expect(events.map((e) => e.type).slice(-4)).toEqual(['ToolCallStarted', 'ToolCallFinished', 'SecretsUnavailable', 'TaskFailed']);
    const reason = 'In the sandbox service: Secrets TOKEN cannot be opened: no SECRETS_KEY (or SECRETS_KEY_FILE) is set on this process.';
    expect(events.at(-3)!.data).toMatchObject({ status: 'error', output: reason });
    expect(events.at(-1)!.data.error).toBe(reason);
  });
});
