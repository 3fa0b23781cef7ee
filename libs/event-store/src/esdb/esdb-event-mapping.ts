import type {
  AppendExpectedRevision,
  CurrentRevision,
  EventData,
  JSONType,
  Position,
  ReadPosition,
  RecordedEvent,
} from '@eventstore/db-client';
import { ANY, NO_STREAM, START, WrongExpectedVersionError, jsonEvent } from '@eventstore/db-client';
import { ExpectedRevisionConflictError, UnreadableStoredEventError } from '../event-store.errors';
import type { ExpectedRevision, NewEvent, StoredEvent } from '../event-store.port';

// Pure translations between the port and EventStoreDB; the adapter does the I/O.

// ---------------------------------------------------------------------------------------------
// Stream names
// ---------------------------------------------------------------------------------------------

/**
 * Our streams are `${prefix}${streamId}` in EventStoreDB. The prefix keeps them apart from system
 * streams (`$…`) and from anything else on the server, and it is the server-side filter of the
 * $all subscription. `agentic.task-1` keeps ESDB's category (`agentic.task`) per aggregate.
 */
export const DEFAULT_ESDB_STREAM_PREFIX = 'agentic.';

export function assertStreamPrefix(prefix: string): void {
  if (prefix === '' || prefix.startsWith('$')) {
    throw new Error(`EventStoreDB stream prefix must be non-empty and must not start with "$" (system streams), got "${prefix}"`);
  }
}

export const toEsdbStreamName = (prefix: string, streamId: string): string => `${prefix}${streamId}`;

/** The port's stream id of an ESDB stream, or undefined when the stream is not ours. */
export const fromEsdbStreamName = (prefix: string, streamName: string): string | undefined =>
  streamName.startsWith(prefix) ? streamName.slice(prefix.length) : undefined;

// ---------------------------------------------------------------------------------------------
// Revisions: the port counts from 1 (0 = no stream), ESDB from 0 (no stream = NO_STREAM / -1)
// ---------------------------------------------------------------------------------------------

export function toEsdbExpectedRevision(expected: ExpectedRevision): AppendExpectedRevision {
  if (expected === 'any') return ANY;
  // Port revision 0 means "the stream has no events", which is ESDB's NO_STREAM.
  if (expected === 'no_stream' || expected === 0) return NO_STREAM;
  return toEsdbRevision(expected);
}

/** ESDB revision of the event with port revision `revision` (>= 1). */
export function toEsdbRevision(revision: number): bigint {
  if (!Number.isSafeInteger(revision) || revision < 1) throw new RangeError(`invalid stream revision ${revision}: revisions start at 1`);
  return BigInt(revision - 1);
}

export const fromEsdbRevision = (revision: bigint): number => Number(revision) + 1;

/**
 * The port revision of a stream from ESDB's current revision. Servers and client paths report
 * a missing stream as NO_STREAM or as -1, both of which are 0 here.
 */
export const currentRevisionFromEsdb = (current: CurrentRevision): number =>
  current === NO_STREAM ? 0 : Math.max(0, fromEsdbRevision(current));

/** The port's conflict error for ESDB's, or undefined when `error` is something else. */
export function toConflictError(error: unknown, streamId: string, expected: ExpectedRevision): ExpectedRevisionConflictError | undefined {
  if (!(error instanceof WrongExpectedVersionError)) return undefined;
  return new ExpectedRevisionConflictError(streamId, expected, currentRevisionFromEsdb(error.actualVersion));
}

// ---------------------------------------------------------------------------------------------
// Global positions
// ---------------------------------------------------------------------------------------------
//
// An ESDB $all position is {commit, prepare}: byte offsets in the transaction log, as bigints.
// The port's globalPosition is the commit position as a number:
// - $all is ordered by commit position, in commit order, and a read never returns a record past
//   the last indexed (committed) one. So positions only grow in the order readers see them: the
//   "sequence gap" problem of PostgreSQL (a later-numbered row committing first) cannot happen.
//   Positions are sparse (byte offsets, not 1, 2, 3), which the port allows.
// - Every append through gRPC is an implicit transaction: each event is its own log record and
//   its $all position is {its log offset, its log offset}. Events of one append therefore have
//   distinct, increasing commit positions, and commit === prepare. (Only explicit transactions of
//   the legacy TCP API shared one commit position; this adapter never writes them, and decoding
//   from $all checks commit === prepare.) So one number identifies the event, and
//   {commit: P, prepare: P} is again its exact ESDB position, to read or subscribe from.
// - Offsets fit a JS number up to 2^53 bytes (8 PiB) of log; beyond that we fail loudly.

const MAX_POSITION = BigInt(Number.MAX_SAFE_INTEGER);

export function toGlobalPosition(position: Position | undefined, where: string): number {
  if (!position) throw new UnreadableStoredEventError(where, 'EventStoreDB returned no log position');
  // Servers before 22.6 send "no position" (2^64 - 1) for events read from a stream.
  if (position.commit < 0n || position.commit > MAX_POSITION) {
    throw new UnreadableStoredEventError(
      where,
      `log position ${position.commit} is not usable (EventStoreDB 22.6 or later reports positions on stream reads)`,
    );
  }
  return Number(position.commit);
}

/** Where to start reading $all (inclusive) or subscribing to it (exclusive) for `globalPosition`. */
export function toEsdbPosition(globalPosition: number): ReadPosition {
  if (!Number.isSafeInteger(globalPosition) || globalPosition < 0) throw new RangeError(`invalid global position ${globalPosition}`);
  if (globalPosition === 0) return START;
  const at = BigInt(globalPosition);
  return { commit: at, prepare: at };
}

export function comparePositions(a: Position, b: Position): number {
  if (a.commit !== b.commit) return a.commit < b.commit ? -1 : 1;
  return a.prepare === b.prepare ? 0 : a.prepare < b.prepare ? -1 : 1;
}

// ---------------------------------------------------------------------------------------------
// Events: data is the JSON body, everything else of the port goes in the metadata
// ---------------------------------------------------------------------------------------------

/** Place of an event in the append that wrote it; subscribers regroup appends by it. */
export interface BatchMark {
  readonly index: number;
  readonly size: number;
}

/**
 * The JSON metadata this adapter writes on every event. The caller's metadata is nested rather
 * than merged, so that it round-trips whatever keys it has.
 */
export interface EsdbEventMetadata {
  readonly schemaVersion: number;
  readonly batch: BatchMark;
  readonly metadata?: Record<string, unknown>;
}

export function toEventData(event: NewEvent, batch: BatchMark): EventData {
  const metadata: EsdbEventMetadata = {
    schemaVersion: event.schemaVersion,
    batch,
    ...(event.metadata === undefined ? {} : { metadata: event.metadata }),
  };
  // `undefined` has no JSON form; the SQL adapter stores it as null too.
  return jsonEvent({ type: event.type, data: (event.data ?? null) as JSONType, metadata });
}

export interface DecodedEvent {
  readonly stored: StoredEvent;
  readonly batch: BatchMark;
}

/**
 * `fromAll`: the event was read from $all (read or subscription), whose positions are the ones
 * to trust for commit === prepare.
 */
export function decodeRecordedEvent(recorded: RecordedEvent, streamId: string, options: { fromAll?: boolean } = {}): DecodedEvent {
  const where = `${recorded.streamId}@${recorded.revision}`;
  if (!recorded.isJson) throw new UnreadableStoredEventError(where, 'data is not JSON');
  const envelope = parseEnvelope(recorded.metadata, where);
  const globalPosition = toGlobalPosition(recorded.position, where);
  if (options.fromAll && recorded.position && recorded.position.commit !== recorded.position.prepare) {
    throw new UnreadableStoredEventError(
      where,
      'commit and prepare positions differ (an explicit transaction, which this adapter never writes)',
    );
  }
  const stored: StoredEvent = {
    streamId,
    revision: fromEsdbRevision(recorded.revision),
    globalPosition,
    type: recorded.type,
    schemaVersion: envelope.schemaVersion,
    data: recorded.data,
    ...(envelope.metadata === undefined ? {} : { metadata: envelope.metadata }),
    recordedAt: recorded.created.toISOString(),
  };
  return { stored, batch: envelope.batch };
}

function parseEnvelope(raw: unknown, where: string): EsdbEventMetadata {
  if (!isPlainObject(raw)) throw new UnreadableStoredEventError(where, 'metadata is not a JSON object');
  const { schemaVersion, batch, metadata } = raw;
  if (!Number.isInteger(schemaVersion)) throw new UnreadableStoredEventError(where, 'metadata has no integer schemaVersion');
  if (!isPlainObject(batch) || !Number.isInteger(batch.size) || !Number.isInteger(batch.index)) {
    throw new UnreadableStoredEventError(where, 'metadata has no batch {index, size}');
  }
  const mark = { index: batch.index as number, size: batch.size as number };
  if (mark.index < 0 || mark.index >= mark.size)
    throw new UnreadableStoredEventError(where, `batch index ${mark.index} is outside 0..${mark.size - 1}`);
  if (metadata !== undefined && !isPlainObject(metadata))
    throw new UnreadableStoredEventError(where, 'metadata.metadata is not a JSON object');
  return { schemaVersion: schemaVersion as number, batch: mark, ...(metadata === undefined ? {} : { metadata }) };
}

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Uint8Array);
