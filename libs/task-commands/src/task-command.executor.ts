import { EventStore, StoredEvent, handleCommand } from '@app/event-store';
import {
  TASK_EVENT_SCHEMA_VERSIONS,
  TaskCommand,
  TaskEvent,
  TaskState,
  decide,
  evolve,
  foldTask,
  initialTaskState,
  taskStreamId,
} from '@app/task-domain';

const taskDecider = { decide, evolve, initialState: initialTaskState };

export interface TaskCommandOutcome {
  readonly state: TaskState;
  readonly events: readonly StoredEvent[];
  /** Global position of the last event written, or undefined for a no-op. */
  readonly position?: number;
}

/** Runs task commands against the event store: the one write path of every service. */
export class TaskCommandExecutor {
  constructor(private readonly store: EventStore) {}

  async execute(taskId: string, command: TaskCommand, options: { retries?: number } = {}): Promise<TaskCommandOutcome> {
    const result = await handleCommand<TaskState, TaskCommand, TaskEvent>(this.store, taskStreamId(taskId), command, taskDecider, {
      retries: options.retries,
      schemaVersionOf: (type) => TASK_EVENT_SCHEMA_VERSIONS[type],
    });
    return { state: result.state, events: result.newEvents, position: result.appended?.lastGlobalPosition };
  }

  async load(taskId: string): Promise<{ state: TaskState; events: StoredEvent[] }> {
    const events = await this.store.readStream(taskStreamId(taskId));
    return { state: foldTask(events.map(toTaskEvent)), events };
  }
}

export const toTaskEvent = (e: StoredEvent): TaskEvent => ({ type: e.type, data: e.data }) as TaskEvent;
