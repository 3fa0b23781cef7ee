import { ANY, NO_STREAM, START, WrongExpectedVersionError, binaryEvent } from '@eventstore/db-client';
import { ExpectedRevisionConflictError, UnreadableStoredEventError } from '../event-store.errors';
import type { NewEvent } from '../event-store.port';
import { recordedEvent } from '../testing/esdb-recorded-event';
import {
  assertStreamPrefix,
  comparePositions,
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

describe('esdb mapping: stream names', () => {
  it('prefixes our stream ids and recognises only prefixed names as ours', () => {
    expect(toEsdbStreamName('agentic.', 'task-1')).toBe('agentic.task-1');
    expect(fromEsdbStreamName('agentic.', 'agentic.task-1')).toBe('task-1');
    expect(fromEsdbStreamName('agentic.', 'other.task-1')).toBeUndefined();
    expect(fromEsdbStreamName('agentic.', '$ce-agentic.task')).toBeUndefined();
  });

  it('rejects an empty prefix and one that names system streams', () => {
    expect(() => assertStreamPrefix('')).toThrow(/non-empty/);
    expect(() => assertStreamPrefix('$mine.')).toThrow(/\$/);
    expect(() => assertStreamPrefix('test-1.')).not.toThrow();
  });
});

describe('esdb mapping: revisions', () => {
  it('maps expected revisions: port revision n is ESDB revision n - 1, and 0 is no stream', () => {
    expect(toEsdbExpectedRevision('any')).toBe(ANY);
    expect(toEsdbExpectedRevision('no_stream')).toBe(NO_STREAM);
    expect(toEsdbExpectedRevision(0)).toBe(NO_STREAM);
    expect(toEsdbExpectedRevision(1)).toBe(0n);
    expect(toEsdbExpectedRevision(42)).toBe(41n);
  });

  it('rejects revisions that are negative or not integers', () => {
    expect(() => toEsdbExpectedRevision(-1)).toThrow(RangeError);
    expect(() => toEsdbExpectedRevision(1.5)).toThrow(RangeError);
    expect(() => toEsdbRevision(0)).toThrow(RangeError);
  });

  it('reads ESDB revisions and current revisions back as 1-based, with no stream as 0', () => {
    expect(fromEsdbRevision(0n)).toBe(1);
    expect(toEsdbRevision(fromEsdbRevision(7n))).toBe(7n);
    expect(currentRevisionFromEsdb(NO_STREAM)).toBe(0);
    expect(currentRevisionFromEsdb(-1n)).toBe(0);
    expect(currentRevisionFromEsdb(4n)).toBe(5);
  });

  it("turns ESDB's wrong expected version into the port's conflict with the actual port revision", () => {
    const existing = new WrongExpectedVersionError(undefined, { streamName: 'agentic.s', expected: NO_STREAM, current: 0n });
    const conflict = toConflictError(existing, 's', 'no_stream');
    expect(conflict).toBeInstanceOf(ExpectedRevisionConflictError);
    expect(conflict).toMatchObject({ streamId: 's', expected: 'no_stream', actual: 1, code: 'EVENT_STORE.EXPECTED_REVISION_CONFLICT' });

    const missing = new WrongExpectedVersionError(undefined, { streamName: 'agentic.t', expected: 0n, current: NO_STREAM });
    expect(toConflictError(missing, 't', 1)).toMatchObject({ expected: 1, actual: 0 });
  });

  it('leaves other errors alone', () => {
    expect(toConflictError(new Error('unavailable'), 's', 1)).toBeUndefined();
  });
});

describe('esdb mapping: global positions', () => {
  it('is the commit position, as a number', () => {
    expect(toGlobalPosition({ commit: 123_456n, prepare: 123_456n }, 'x')).toBe(123_456);
    expect(toGlobalPosition({ commit: BigInt(Number.MAX_SAFE_INTEGER), prepare: 0n }, 'x')).toBe(Number.MAX_SAFE_INTEGER);
  });

  it('fails loudly without a usable position: none, "no position" from old servers, or beyond 2^53', () => {
    expect(() => toGlobalPosition(undefined, 'agentic.s@0')).toThrow(UnreadableStoredEventError);
    expect(() => toGlobalPosition({ commit: 2n ** 64n - 1n, prepare: 2n ** 64n - 1n }, 'x')).toThrow(/22\.6/);
    expect(() => toGlobalPosition({ commit: BigInt(Number.MAX_SAFE_INTEGER) + 1n, prepare: 0n }, 'x')).toThrow(UnreadableStoredEventError);
  });

  it('turns a global position back into the ESDB position of that event, and 0 into the start', () => {
    expect(toEsdbPosition(0)).toBe(START);
    expect(toEsdbPosition(9_876)).toEqual({ commit: 9_876n, prepare: 9_876n });
    expect(() => toEsdbPosition(-1)).toThrow(RangeError);
    expect(() => toEsdbPosition(1.5)).toThrow(RangeError);
  });

  it('orders positions by commit, then prepare', () => {
    expect(comparePositions({ commit: 1n, prepare: 9n }, { commit: 2n, prepare: 2n })).toBe(-1);
    expect(comparePositions({ commit: 2n, prepare: 3n }, { commit: 2n, prepare: 2n })).toBe(1);
    expect(comparePositions({ commit: 2n, prepare: 2n }, { commit: 2n, prepare: 2n })).toBe(0);
  });
});

describe('esdb mapping: events', () => {
  const at = { streamName: 'agentic.task-1', revision: 2n, position: 5_000n, created: new Date('2025-05-06T07:08:09.123Z') };

  it('writes data as the JSON body and schemaVersion, batch and metadata as JSON metadata', () => {
    const written = toEventData(
      { type: 'TaskCreated', data: { title: 'a' }, schemaVersion: 2, metadata: { correlationId: 'c-1' } },
      { index: 1, size: 3 },
    );
    expect(written).toMatchObject({
      contentType: 'application/json',
      type: 'TaskCreated',
      data: { title: 'a' },
      metadata: { schemaVersion: 2, batch: { index: 1, size: 3 }, metadata: { correlationId: 'c-1' } },
    });
    expect(written.id).toMatch(/^[0-9a-f-]{36}$/);
  });

  it.each<[string, NewEvent]>([
    [
      'object data with metadata',
      { type: 'TaskCreated', data: { title: 'a', tags: ['x'] }, schemaVersion: 2, metadata: { correlationId: 'c-1', $causationId: 'e-0' } },
    ],
    ['array data without metadata', { type: 'TaskNoted', data: ['list', 2], schemaVersion: 1 }],
    ['string data', { type: 'Said', data: 'hello', schemaVersion: 3 }],
    ['no data (stored as null, as the SQL adapter does)', { type: 'Pinged', data: null, schemaVersion: 1 }],
  ])('round-trips %s', (_, event) => {
    const { stored, batch } = decodeRecordedEvent(recordedEvent(toEventData(event, { index: 0, size: 1 }), at), 'task-1', {
      fromAll: true,
    });
    expect(stored).toEqual({
      ...event,
      streamId: 'task-1',
      revision: 3,
      globalPosition: 5_000,
      recordedAt: '2025-05-06T07:08:09.123Z',
    });
    expect('metadata' in stored).toBe(event.metadata !== undefined);
    expect(batch).toEqual({ index: 0, size: 1 });
  });

  it('refuses events it did not write: binary data, no or malformed envelope', () => {
    const good = toEventData({ type: 'T', data: {}, schemaVersion: 1 }, { index: 0, size: 1 });
    const decode = (metadata: unknown) => () => decodeRecordedEvent({ ...recordedEvent(good, at), metadata } as never, 'task-1');

    expect(() => decodeRecordedEvent(recordedEvent(binaryEvent({ type: 'T', data: new Uint8Array([1]) }), at), 'task-1')).toThrow(
      /not JSON/,
    );
    expect(decode(undefined)).toThrow(UnreadableStoredEventError);
    expect(decode({ batch: { index: 0, size: 1 } })).toThrow(/schemaVersion/);
    expect(decode({ schemaVersion: 1 })).toThrow(/batch/);
    expect(decode({ schemaVersion: 1, batch: { index: 1, size: 1 } })).toThrow(/outside/);
    expect(decode({ schemaVersion: 1, batch: { index: 0, size: 1 }, metadata: [1] })).toThrow(/not a JSON object/);
  });

  it('refuses a $all event whose commit and prepare positions differ', () => {
    const event = recordedEvent(toEventData({ type: 'T', data: {}, schemaVersion: 1 }, { index: 0, size: 1 }), at);
    const split = { ...event, position: { commit: 5_000n, prepare: 5_100n } } as typeof event;
    expect(() => decodeRecordedEvent(split, 'task-1', { fromAll: true })).toThrow(/explicit transaction/);
    // Stream reads of servers before 22.6 report the transaction's position as prepare: not checked there.
    expect(decodeRecordedEvent(split, 'task-1').stored.globalPosition).toBe(5_000);
  });
});
