import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { newId } from '@app/common';
import type { ScriptedOpenAiServer } from '@app/model-provider/testing/scripted-openai-server';
import { startScriptedOpenAiServer } from '@app/model-provider/testing/scripted-openai-server';
import type { EventStore } from '@app/event-store';
import { EVENT_STORE } from '@app/event-store';
import { TaskCommandExecutor } from '@app/task-commands';
import { startStandalone } from '../../services/standalone/src/bootstrap';
import { ApiClient } from './api-client';
import { makeTmpDir, removeDir } from './tmp-dir';
import { waitUntil, withTimeout } from './timing';

export const BENCH_KEY = 'bench-key';

/**
 * The all-in-one service started in this process, over a scripted model that never answers, so a
 * created task stays `running` for as long as the benchmark needs it.
 */
export class InProcessService {
  private constructor(
    readonly app: NestFastifyApplication,
    readonly url: string,
    readonly api: ApiClient,
    readonly model: ScriptedOpenAiServer,
    readonly executor: TaskCommandExecutor,
    private readonly dataDir: string,
  ) {}

  /** `extraEnv`: more variables for the service (e.g. the WEBHOOK_* settings). */
  static async start(extraEnv: Record<string, string> = {}): Promise<InProcessService> {
    const dataDir = await makeTmpDir('inproc');
    let model: ScriptedOpenAiServer | undefined;
    try {
      model = await startScriptedOpenAiServer({ defaultReply: { hang: true } });
      const env: NodeJS.ProcessEnv = {
        PATH: process.env.PATH,
        DATA_DIR: dataDir,
        API_KEYS: BENCH_KEY,
        LLM_BASE_URL: model.url,
        LLM_MODEL: 'bench',
        LLM_STREAM: 'false',
        // The hanging model call must outlive the benchmark rather than time out and retry.
        LLM_TIMEOUT_MS: '3600000',
        ...extraEnv,
      };
      const { app, url } = await withTimeout('in-process service start', startStandalone({ env, port: 0, logLevels: ['error'] }), 90_000);
      return new InProcessService(app, url, new ApiClient(url, BENCH_KEY), model, app.get(TaskCommandExecutor), dataDir);
    } catch (error) {
      await model?.close().catch(() => undefined);
      await removeDir(dataDir);
      throw error;
    }
  }

  /** The service's event store (for observing appends; the benchmarks never write to it directly). */
  get store(): EventStore {
    return this.app.get<EventStore>(EVENT_STORE);
  }

  /** Creates a task and waits until its turn is running and its model call is hanging; returns its id and last event id. */
  async createHangingTask(): Promise<{ id: string; lastEventId: number }> {
    const before = this.model.requests.length;
    const id = await this.api.createTask('bench');
    await waitUntil('the task to reach the model', () => this.model.requests.length > before, 10_000, 5);
    const task = await this.api.getTask(id);
    if (task.status !== 'running') throw new Error(`task ${id} is ${task.status}, expected running`);
    return { id, lastEventId: task.lastEventId };
  }

  /** Appends one queued follow-up (`message` event) through the command executor; returns its revision. */
  async appendFollowUp(taskId: string): Promise<number> {
    const { events } = await this.executor.execute(taskId, { type: 'AddUserMessage', data: { messageId: newId('msg'), text: 'x' } });
    if (events.length !== 1) throw new Error(`a follow-up appended ${events.length} events, expected 1 (is the turn still running?)`);
    return events[0].revision;
  }

  async close(): Promise<void> {
    await withTimeout('app.close()', this.app.close(), 20_000).catch((error: unknown) => console.error(String(error)));
    await this.model.close().catch(() => undefined);
    await removeDir(this.dataDir);
  }
}
