import type { AllStreamRecordedEvent, EventData, Position, ReadPosition } from '@eventstore/db-client';
import { BACKWARDS, END, EventStoreDBClient, START, StreamNotFoundError, streamNameFilter } from '@eventstore/db-client';
import { EventStoreClosedError, ExpectedRevisionConflictError } from '../event-store.errors';
import type {
  AppendResult,
  EventStore,
  ExpectedRevision,
  NewEvent,
  ReadAllOptions,
  ReadStreamOptions,
  StoredEvent,
  Unsubscribe,
} from '../event-store.port';
import { EsdbAppendedFeed } from './esdb-appended-feed';
import type { DecodedEvent } from './esdb-event-mapping';
import {
  DEFAULT_ESDB_STREAM_PREFIX,
  assertStreamPrefix,
  currentRevisionFromEsdb,
  decodeRecordedEvent,
  fromEsdbRevision,
  fromEsdbStreamName,
  toConflictError,
  toEsdbExpectedRevision,
  toEsdbPosition,
  toEsdbRevision,
  toEsdbStreamName,
  toEventData,
  toGlobalPosition,
} from './esdb-event-mapping';

export interface EsdbEventStoreOptions {
  /**
   * An EventStoreDB connection string, e.g. `esdb://127.0.0.1:2113?tls=false`. On a server with
   * access control, its user (`esdb://user:password@host:2113`) must be allowed to read $all
   * (by default: members of $admins). Keep the default `nodePreference=leader`: each append is
   * read back from the leader.
   */
  readonly connectionString: string;
  /** Prefix of our stream names in EventStoreDB; default `agentic.` (see esdb-event-mapping.ts). */
  readonly streamPrefix?: string;
  readonly reportError?: (error: unknown) => void;
}

/** The slice of the client this adapter uses; a test can hand in a fake of it. */
export type EsdbClient = Pick<EventStoreDBClient, 'appendToStream' | 'readStream' | 'readAll' | 'subscribeToAll' | 'dispose'>;

/** The distributed mode's production store: EventStoreDB (20.10 or later; 22.6 or later for stream positions). */
export async function createEsdbEventStore(options: EsdbEventStoreOptions): Promise<EventStore> {
  assertStreamPrefix(options.streamPrefix ?? DEFAULT_ESDB_STREAM_PREFIX);
  return openEsdbEventStore(EventStoreDBClient.connectionString(options.connectionString), options);
}

/**
 * Opens the store over a client the caller built (e.g. with client certificates); the store owns
 * it from then on: close() disposes it, and so does a failed open.
 */
export async function openEsdbEventStore(
  client: EsdbClient,
  options: Omit<EsdbEventStoreOptions, 'connectionString'> = {},
): Promise<EventStore> {
  const prefix = options.streamPrefix ?? DEFAULT_ESDB_STREAM_PREFIX;
  const reportError = options.reportError ?? ((error: unknown) => console.error('event store (esdb):', error));
  let start: FeedStart;
  try {
    assertStreamPrefix(prefix);
    const last = await lastPositionInAll(client).catch((error: unknown) => {
      const reason = error instanceof Error ? error.message : String(error);
      throw new Error(`EventStoreDB: cannot read $all (is the server up, and may this user read $all?): ${reason}`, { cause: error });
    });
    start = last ? { after: last, committed: toGlobalPosition(last, 'last event of $all') } : { after: START, committed: 0 };
  } catch (error) {
    await client.dispose();
    throw error;
  }
  return new EsdbEventStore(client, prefix, start, reportError);
}

/** Where onAppended starts: after the last event of $all when the store opened. */
interface FeedStart {
  readonly after: ReadPosition;
  readonly committed: number;
}

/** The last position of $all, any stream's: onAppended starts after it. */
async function lastPositionInAll(client: EsdbClient): Promise<Position | undefined> {
  for await (const resolved of client.readAll({ direction: BACKWARDS, fromPosition: END, maxCount: 1 })) return resolved.event?.position;
  return undefined;
}

class EsdbEventStore implements EventStore {
  private readonly feed: EsdbAppendedFeed;
  private closing?: Promise<void>;

  constructor(
    private readonly client: EsdbClient,
    private readonly prefix: string,
    start: FeedStart,
    reportError: (error: unknown) => void,
  ) {
    this.feed = new EsdbAppendedFeed({
      subscribe: (from) => client.subscribeToAll({ fromPosition: from, filter: streamNameFilter({ prefixes: [prefix] }) }),
      decode: (recorded) => this.decodeFromAll(recorded),
      reportError,
      startAfter: start.after,
      committed: start.committed,
    });
    this.feed.start();
  }

  async appendToStream(streamId: string, events: readonly NewEvent[], expected: ExpectedRevision): Promise<AppendResult> {
    this.assertOpen();
    if (events.length === 0) throw new Error(`appendToStream(${streamId}): events must not be empty`);
    const streamName = toEsdbStreamName(this.prefix, streamId);
    const data = events.map((event, index) => toEventData(event, { index, size: events.length }));
    let result;
    try {
      result = await this.client.appendToStream(streamName, data, { expectedRevision: toEsdbExpectedRevision(expected) });
    } catch (error) {
      throw toConflictError(error, streamId, expected) ?? error;
    }
    // Only with throwOnAppendFailure=false in the connection string: a conflict comes back as a value.
    if (!result.success) throw new ExpectedRevisionConflictError(streamId, expected, currentRevisionFromEsdb(result.nextExpectedRevision));

    const lastRevision = fromEsdbRevision(result.nextExpectedRevision);
    const stored = await this.readBack(streamName, streamId, lastRevision - events.length + 1, data);
    const lastGlobalPosition = stored[stored.length - 1].globalPosition;
    this.feed.noteCommitted(lastGlobalPosition);
    return { nextExpectedRevision: lastRevision, lastGlobalPosition, events: stored };
  }

  async readStream(streamId: string, options: ReadStreamOptions = {}): Promise<StoredEvent[]> {
    this.assertOpen();
    const maxCount = options.maxCount ?? Number.MAX_SAFE_INTEGER;
    if (maxCount <= 0) return [];
    const fromRevision = toEsdbRevision(Math.max(1, Math.ceil(options.fromRevision ?? 1)));
    const events: StoredEvent[] = [];
    try {
      for await (const resolved of this.client.readStream(toEsdbStreamName(this.prefix, streamId), { fromRevision, maxCount })) {
        if (resolved.event) events.push(decodeRecordedEvent(resolved.event, streamId).stored);
      }
    } catch (error) {
      if (error instanceof StreamNotFoundError) return [];
      throw error;
    }
    return events;
  }

  async streamRevision(streamId: string): Promise<number> {
    this.assertOpen();
    try {
      const read = this.client.readStream(toEsdbStreamName(this.prefix, streamId), {
        direction: BACKWARDS,
        fromRevision: END,
        maxCount: 1,
      });
      for await (const resolved of read) if (resolved.event) return fromEsdbRevision(resolved.event.revision);
    } catch (error) {
      if (!(error instanceof StreamNotFoundError)) throw error;
    }
    return 0;
  }

  /**
   * Client 6.2 cannot filter a read of $all on the server (only subscriptions), so this reads $all
   * from `after` and keeps our streams' events; it stops reading once it has `maxCount`.
   */
  async readAll(options: ReadAllOptions = {}): Promise<StoredEvent[]> {
    this.assertOpen();
    const after = options.after ?? 0;
    const maxCount = options.maxCount ?? Number.POSITIVE_INFINITY;
    if (maxCount <= 0) return [];
    // Reading $all from a position includes the event there; `after` is exclusive.
    const read = this.client.readAll({ fromPosition: toEsdbPosition(after) });
    const events: StoredEvent[] = [];
    let stoppedEarly = false;
    try {
      for await (const resolved of read) {
        const decoded = resolved.event && this.decodeFromAll(resolved.event);
        if (!decoded || decoded.stored.globalPosition <= after) continue;
        events.push(decoded.stored);
        if (events.length >= maxCount) {
          stoppedEarly = true;
          break;
        }
      }
    } finally {
      // Leaving the loop early destroys the stream but leaves the gRPC call open.
      if (stoppedEarly) await read.cancel();
    }
    return events;
  }

  onAppended(listener: (events: readonly StoredEvent[]) => void): Unsubscribe {
    this.assertOpen();
    return this.feed.subscribe(listener);
  }

  close(): Promise<void> {
    this.closing ??= (async () => {
      await this.feed.stop();
      await this.client.dispose();
    })();
    return this.closing;
  }

  private assertOpen(): void {
    if (this.closing) throw new EventStoreClosedError();
  }

  private decodeFromAll(recorded: AllStreamRecordedEvent): DecodedEvent | undefined {
    const streamId = fromEsdbStreamName(this.prefix, recorded.streamId);
    return streamId === undefined ? undefined : decodeRecordedEvent(recorded, streamId, { fromAll: true });
  }

  /**
   * ESDB's append answers with the last revision only; the port returns the stored events with
   * their positions and timestamps, so they are read back (from the leader, which acknowledged
   * the append). Should this read fail, the append has still happened, as with a lost commit
   * acknowledgement: a retry with the same expected revision then gets a conflict.
   */
  private async readBack(
    streamName: string,
    streamId: string,
    fromRevision: number,
    written: readonly EventData[],
  ): Promise<StoredEvent[]> {
    const events: StoredEvent[] = [];
    const read = this.client.readStream(streamName, {
      fromRevision: toEsdbRevision(fromRevision),
      maxCount: written.length,
      requiresLeader: true,
    });
    for await (const resolved of read) {
      if (!resolved.event) continue;
      if (resolved.event.id.toLowerCase() !== written[events.length]?.id.toLowerCase()) {
        throw new Error(`EventStoreDB: ${streamName}@${resolved.event.revision} is not the event just appended`);
      }
      events.push(decodeRecordedEvent(resolved.event, streamId).stored);
    }
    if (events.length !== written.length)
      throw new Error(`EventStoreDB: read back ${events.length} of the ${written.length} events appended to ${streamName}`);
    return events;
  }
}
