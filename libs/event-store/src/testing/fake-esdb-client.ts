import { PassThrough, Readable } from 'node:stream';
import type {
  AllStreamRecordedEvent,
  AllStreamResolvedEvent,
  AppendResult,
  AppendToStreamOptions,
  EventData,
  Position,
  ReadAllOptions,
  ReadStreamOptions,
  SubscribeToAllOptions,
} from '@eventstore/db-client';
import {
  ANY,
  BACKWARDS,
  END,
  NO_STREAM,
  STREAM_EXISTS,
  START,
  StreamNotFoundError,
  WrongExpectedVersionError,
} from '@eventstore/db-client';
import type { EsdbClient } from '../esdb/esdb-event-store';

interface LogRecord {
  readonly streamName: string;
  readonly id: string;
  readonly type: string;
  readonly isJson: boolean;
  readonly data: string | Uint8Array;
  readonly metadata?: string;
  readonly revision: bigint;
  readonly position: bigint;
  readonly created: Date;
}

/**
 * An in-memory stand-in for the parts of @eventstore/db-client the adapter uses, following the
 * server's documented and observed behaviour:
 * - the log is one sequence of records at byte offsets; a gRPC append writes its events
 *   consecutively, each at $all position {offset, offset}, and answers after they are readable;
 * - reading $all from a position includes the event there, subscribing to $all from a position
 *   starts after it; stream-name prefix filters apply to subscriptions;
 * - a stream that was never written reads as StreamNotFoundError; a wrong expected revision is
 *   WrongExpectedVersionError with the stream's current revision (0-based) or NO_STREAM.
 * It is what makes the adapter's own logic testable here; it proves nothing about a real server.
 */
export class FakeEsdbClient {
  private readonly log: LogRecord[] = [];
  private readonly subscriptions = new Set<FakeAllSubscription>();
  private nextPosition = 0n;

  constructor() {
    // A real $all never starts empty, and its system records must not show through.
    this.write('$epoch-information', [{ id: 'e0', type: '$epoch', contentType: 'application/json', data: {}, metadata: undefined }]);
    this.write('$settings', [{ id: 's0', type: '$settings', contentType: 'application/json', data: {}, metadata: undefined }]);
  }

  /** Writes system or foreign records straight into the log, as other writers would. */
  writeForeign(streamName: string, count = 1): void {
    this.write(
      streamName,
      Array.from({ length: count }, (_, i) => ({
        id: `${streamName}-${i}`,
        type: 'Other',
        contentType: 'application/json',
        data: { i },
        metadata: undefined,
      })),
    );
  }

  /** Fails every open subscription, as a dropped connection or a restarting server does. */
  dropSubscriptions(error = new Error('14 UNAVAILABLE: Connection dropped')): void {
    for (const subscription of [...this.subscriptions]) subscription.fail(error);
  }

  get openSubscriptions(): number {
    return this.subscriptions.size;
  }

  async appendToStream(streamName: string, events: EventData | EventData[], options: AppendToStreamOptions = {}): Promise<AppendResult> {
    await new Promise((r) => setImmediate(r));
    const list = Array.isArray(events) ? events : [events];
    const expected = options.expectedRevision ?? ANY;
    const current = this.currentRevision(streamName);
    const matches =
      expected === ANY ||
      (expected === NO_STREAM && current === undefined) ||
      (expected === STREAM_EXISTS && current !== undefined) ||
      (typeof expected === 'bigint' && current === expected);
    if (!matches) throw new WrongExpectedVersionError(undefined, { streamName, expected, current: current ?? NO_STREAM });
    const written = this.write(streamName, list);
    const last = written[written.length - 1];
    return { success: true, nextExpectedRevision: last.revision, position: { commit: last.position, prepare: last.position } };
  }

  readStream(streamName: string, options: ReadStreamOptions = {}): Readable & { cancel(): Promise<void> } {
    const backwards = options.direction === BACKWARDS;
    const from = options.fromRevision ?? (backwards ? END : START);
    const maxCount = Number(options.maxCount ?? Number.MAX_SAFE_INTEGER);
    const records = this.log.filter((r) => r.streamName === streamName);
    if (records.length === 0) return reading(failing(new StreamNotFoundError(undefined, streamName)));
    const start = from === START ? 0n : from === END ? records[records.length - 1].revision : from;
    const selected = backwards ? records.filter((r) => r.revision <= start).reverse() : records.filter((r) => r.revision >= start);
    return reading(Readable.from(selected.slice(0, maxCount).map((r) => resolved(r, { stream: true }))));
  }

  readAll(options: ReadAllOptions = {}): Readable & { cancel(): Promise<void> } {
    const backwards = options.direction === BACKWARDS;
    const from = options.fromPosition ?? (backwards ? END : START);
    const maxCount = Number(options.maxCount ?? Number.MAX_SAFE_INTEGER);
    const at = from === START ? -1n : from === END ? this.nextPosition : from.commit;
    const selected = backwards ? this.log.filter((r) => r.position < at).reverse() : this.log.filter((r) => r.position >= at);
    return reading(Readable.from(selected.slice(0, maxCount).map((r) => resolved(r))));
  }

  subscribeToAll(options: SubscribeToAllOptions = {}): PassThrough {
    const from = options.fromPosition ?? START;
    const after = from === START ? -1n : from === END ? this.nextPosition - 1n : from.commit;
    const prefixes = options.filter && 'prefixes' in options.filter ? options.filter.prefixes : undefined;
    const subscription = new FakeAllSubscription(
      after,
      (r) => !prefixes || prefixes.some((p) => r.streamName.startsWith(p)),
      () => this.log,
      (s) => this.subscriptions.delete(s),
    );
    this.subscriptions.add(subscription);
    setImmediate(() => subscription.start());
    return subscription;
  }

  async dispose(): Promise<void> {
    for (const subscription of [...this.subscriptions]) await subscription.unsubscribe();
  }

  private currentRevision(streamName: string): bigint | undefined {
    const records = this.log.filter((r) => r.streamName === streamName);
    return records.length === 0 ? undefined : records[records.length - 1].revision;
  }

  private write(streamName: string, events: readonly EventData[]): LogRecord[] {
    let revision = this.currentRevision(streamName) ?? -1n;
    const written = events.map((event) => {
      const isJson = event.contentType === 'application/json';
      const record: LogRecord = {
        streamName,
        id: event.id,
        type: event.type,
        isJson,
        data: isJson ? JSON.stringify(event.data) : (event.data as Uint8Array),
        ...(event.metadata === undefined ? {} : { metadata: JSON.stringify(event.metadata) }),
        revision: ++revision,
        position: this.nextPosition,
        created: new Date(),
      };
      // Records are byte offsets: positions grow with gaps.
      this.nextPosition += 137n;
      return record;
    });
    this.log.push(...written);
    for (const subscription of this.subscriptions) subscription.pump();
    return written;
  }
}

class FakeAllSubscription extends PassThrough {
  private started = false;
  private done = false;

  constructor(
    private after: bigint,
    private readonly accepts: (record: LogRecord) => boolean,
    private readonly log: () => readonly LogRecord[],
    private readonly forget: (s: FakeAllSubscription) => void,
  ) {
    super({ objectMode: true });
  }

  start(): void {
    if (this.done) return;
    this.started = true;
    this.emit('confirmation');
    this.pump();
  }

  pump(): void {
    if (!this.started || this.done) return;
    for (const record of this.log()) {
      if (record.position <= this.after) continue;
      this.after = record.position;
      if (this.accepts(record)) this.write(resolved(record));
    }
  }

  fail(error: Error): void {
    this.close();
    this.emit('error', error);
  }

  async unsubscribe(): Promise<void> {
    this.close();
  }

  private close(): void {
    this.done = true;
    this.forget(this);
  }
}

function resolved(record: LogRecord, options: { stream?: boolean } = {}): AllStreamResolvedEvent {
  const position: Position = { commit: record.position, prepare: record.position };
  const event = {
    streamId: record.streamName,
    id: record.id,
    isJson: record.isJson,
    revision: record.revision,
    type: record.type,
    created: record.created,
    data: record.isJson ? JSON.parse(record.data as string) : record.data,
    metadata: record.metadata === undefined ? undefined : JSON.parse(record.metadata),
    position,
  } as AllStreamRecordedEvent;
  return { event, ...(options.stream ? {} : { commitPosition: record.position }) };
}

/** A read that fails on its first pull, as the client's does for a stream that does not exist. */
function failing(error: Error): Readable {
  return new Readable({
    objectMode: true,
    read() {
      this.destroy(error);
    },
  });
}

function reading<T extends Readable>(stream: T): T & { cancel(): Promise<void> } {
  return Object.assign(stream, { cancel: async () => void stream.destroy() });
}

/** The fake typed as the client slice the adapter takes. */
export const asEsdbClient = (fake: FakeEsdbClient): EsdbClient => fake as unknown as EsdbClient;
