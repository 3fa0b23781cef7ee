/** An event as the caller hands it to the store. */
export interface NewEvent<Type extends string = string, Data = unknown> {
  readonly type: Type;
  readonly data: Data;
  /** Schema version of `data` for this `type`; events are long-lived records. */
  readonly schemaVersion: number;
  readonly metadata?: Record<string, unknown>;
}

/** An event as the store returns it. */
export interface StoredEvent<Type extends string = string, Data = unknown> extends NewEvent<Type, Data> {
  readonly streamId: string;
  /** 1-based position inside its stream: the first event of a stream has revision 1. */
  readonly revision: number;
  /**
   * Position in the store-wide order, strictly increasing in commit order: a reader that has
   * seen position P never later sees a new event with a position <= P.
   */
  readonly globalPosition: number;
  readonly recordedAt: string;
}

/**
 * What the caller expects the stream's current revision to be.
 * `'no_stream'`: the stream must not exist yet. A number: its last revision must be exactly that.
 * `'any'`: no check (use only where ordering does not matter).
 */
export type ExpectedRevision = number | 'no_stream' | 'any';

export interface AppendResult {
  /** Revision of the last event appended. */
  readonly nextExpectedRevision: number;
  readonly lastGlobalPosition: number;
  readonly events: readonly StoredEvent[];
}

export interface ReadStreamOptions {
  /** First revision returned (inclusive); default 1. */
  readonly fromRevision?: number;
  readonly maxCount?: number;
}

export interface ReadAllOptions {
  /** Events strictly after this global position; default 0 (everything). */
  readonly after?: number;
  readonly maxCount?: number;
}

export type Unsubscribe = () => void;

/**
 * The append-only event store: the single source of truth of every task.
 * Adapters: embedded (SQLite under DATA_DIR, embedded/), PostgreSQL (sql/ and postgres/) and
 * EventStoreDB (esdb/).
 */
export interface EventStore {
  /**
   * Appends events atomically; throws ExpectedRevisionConflictError when the stream's revision
   * is not `expectedRevision`. An empty `events` list is rejected.
   */
  appendToStream(streamId: string, events: readonly NewEvent[], expectedRevision: ExpectedRevision): Promise<AppendResult>;

  /** Events of one stream in revision order; an unknown stream reads as empty. */
  readStream(streamId: string, options?: ReadStreamOptions): Promise<StoredEvent[]>;

  /** Last revision of a stream, 0 when it does not exist. */
  streamRevision(streamId: string): Promise<number>;

  /** Events of every stream in global order. */
  readAll(options?: ReadAllOptions): Promise<StoredEvent[]>;

  /**
   * Calls `listener` with every batch committed after subscribing, in global order, by this or
   * (for shared stores) any other process. Delivery is a hint with the events attached: a
   * listener that needs gap-free delivery tracks revisions/positions and re-reads on a gap.
   */
  onAppended(listener: (events: readonly StoredEvent[]) => void): Unsubscribe;

  close(): Promise<void>;
}
