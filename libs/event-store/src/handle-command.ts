import { AppendResult, EventStore, ExpectedRevisionConflictError, StoredEvent } from './event-store.port';

export interface Decider<State, Command, Event extends { type: string; data: unknown }> {
  decide(command: Command, state: State): Event[];
  evolve(state: State, event: Event): State;
  initialState(): State;
}

export interface CommandResult<State> {
  readonly state: State;
  /** Undefined when the decider produced no events (an idempotent no-op). */
  readonly appended?: AppendResult;
  readonly newEvents: readonly StoredEvent[];
}

/**
 * Read → fold → decide → append with the revision that was read. A concurrent writer makes the
 * append fail with ExpectedRevisionConflictError; callers opt in to retries (`retries`) only
 * where re-deciding on fresh state is correct.
 */
export async function handleCommand<State, Command, Event extends { type: string; data: unknown }>(
  store: EventStore,
  streamId: string,
  command: Command,
  decider: Decider<State, Command, Event>,
  options: { retries?: number; schemaVersionOf: (type: Event['type']) => number; metadata?: Record<string, unknown> },
): Promise<CommandResult<State>> {
  for (let attempt = 0; ; attempt++) {
    const stored = await store.readStream(streamId);
    const state = stored.map((e) => ({ type: e.type, data: e.data }) as Event).reduce(decider.evolve, decider.initialState());
    const events = decider.decide(command, state);
    if (events.length === 0) return { state, newEvents: [] };
    const expected = stored.length === 0 ? 'no_stream' : stored[stored.length - 1].revision;
    try {
      const appended = await store.appendToStream(
        streamId,
        events.map((e) => ({ type: e.type, data: e.data, schemaVersion: options.schemaVersionOf(e.type), metadata: options.metadata })),
        expected,
      );
      return { state: events.reduce(decider.evolve, state), appended, newEvents: appended.events };
    } catch (error) {
      if (!(error instanceof ExpectedRevisionConflictError) || attempt >= (options.retries ?? 0)) throw error;
    }
  }
}
