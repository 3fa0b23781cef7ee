import { taskStreamId } from '@app/common';
import type { EventStore, StoredEvent } from '@app/event-store';
import { ExpectedRevisionConflictError } from '@app/event-store';
import type { DecidePolicy, TaskCommand, TaskEvent, TaskState } from '@app/task-domain';
import { TASK_EVENT_SCHEMA_VERSIONS, TURNS_START_AT_ONCE, decide, evolve, initialTaskState, toTaskEvent } from '@app/task-domain';
import { StreamCache } from './stream-cache';

export interface TaskCommandOutcome {
  readonly state: TaskState;
  readonly events: readonly StoredEvent[];
  /** Global position of the last event written, or undefined for a no-op. */
  readonly position?: number;
}

export interface LoadedTask {
  readonly state: TaskState;
  /** The task's whole stream, oldest first. Shared with the cache: do not mutate. */
  readonly events: readonly StoredEvent[];
}

/**
 * Runs task commands against the event store: read → fold → decide → append with the revision
 * that was read. This is the one write path of every service. Folded streams are cached, but
 * every load still reads the stream's tail from the store, so the cache only saves re-reading
 * and re-folding what is already known; the store stays the only truth.
 */
export class TaskCommandExecutor {
  private readonly cache = new StreamCache<TaskState>(initialTaskState);

  constructor(
    private readonly store: EventStore,
    private readonly policy: DecidePolicy = TURNS_START_AT_ONCE,
    /** Told of every append this executor makes, with the stream as it was before (metrics). */
    private readonly onAppended?: (history: readonly StoredEvent[], appended: readonly StoredEvent[]) => void,
  ) {}

  /**
   * The events are committed by now: an observer that throws (metrics) must not turn the
   * command into a failure the caller would retry, so it is reported and the command stands.
   */
  private tellAppended(history: readonly StoredEvent[], appended: readonly StoredEvent[]): void {
    try {
      this.onAppended?.(history, appended);
    } catch (error) {
      console.error('task command executor: an onAppended observer failed', error);
    }
  }

  /**
   * A concurrent append makes the append fail with ExpectedRevisionConflictError; `retries`
   * re-decides on the fresh state, which is correct for every task command because the decider
   * re-checks its rules.
   */
  async execute(taskId: string, command: TaskCommand, options: { retries?: number } = {}): Promise<TaskCommandOutcome> {
    const streamId = taskStreamId(taskId);
    // First try at the cached revision without reading: when the cache is behind, the append
    // conflicts and the retry reads the tail. That optimistic try does not spend a retry.
    let optimistic = this.cache.get(streamId);
    for (let attempt = 0; ; attempt++) {
      const { state, events: history } = optimistic ?? (await this.load(taskId));
      const revision = history.length === 0 ? 'no_stream' : history[history.length - 1].revision;
      let events: TaskEvent[];
      try {
        events = decide(command, state, this.policy, revision === 'no_stream' ? 0 : revision);
      } catch (error) {
        // A rule broken against a possibly stale cache is only believed after a fresh read.
        if (!optimistic) throw error;
        events = [];
      }
      if (events.length === 0) {
        // So is a no-op: the cache may not know what another process appended.
        if (!optimistic) return { state, events: [] };
        optimistic = undefined;
        attempt--;
        continue;
      }
      try {
        const appended = await this.store.appendToStream(
          streamId,
          events.map((e) => ({ type: e.type, data: e.data, schemaVersion: TASK_EVENT_SCHEMA_VERSIONS[e.type] })),
          revision,
        );
        const next = this.cache.extend(streamId, appended.events, foldStored);
        this.tellAppended(history, appended.events);
        return { state: next?.state ?? events.reduce(evolve, state), events: appended.events, position: appended.lastGlobalPosition };
      } catch (error) {
        if (!(error instanceof ExpectedRevisionConflictError)) throw error;
        if (optimistic) attempt--;
        else if (attempt >= (options.retries ?? 0)) throw error;
        optimistic = undefined;
      }
    }
  }

  /** The task as this process last loaded it, without reading the store (so possibly behind); undefined if not cached. */
  cached(taskId: string): LoadedTask | undefined {
    return this.cache.get(taskStreamId(taskId));
  }

  async load(taskId: string): Promise<LoadedTask> {
    const streamId = taskStreamId(taskId);
    const fromRevision = (this.cache.get(streamId)?.revision ?? 0) + 1;
    const tail = await this.store.readStream(streamId, { fromRevision });
    const entry = this.cache.extend(streamId, tail, foldStored);
    if (entry) return entry;
    // Not cached, or the entry was dropped while the tail was read (a concurrent load found it out
    // of step): fold the whole stream. `tail` is that stream only when it was read from revision 1;
    // an empty tail read after a cached revision says nothing new was appended, not that there is
    // no stream (taking it for one answered 404 for an existing task under concurrent commands).
    const all = fromRevision === 1 ? tail : await this.store.readStream(streamId);
    return this.cache.extend(streamId, all, foldStored) ?? { state: foldStored(initialTaskState(), all), events: all };
  }
}

const foldStored = (state: TaskState, events: readonly StoredEvent[]): TaskState => events.map(toTaskEvent).reduce(evolve, state);
