import type { AllStreamRecordedEvent, EventData } from '@eventstore/db-client';

export interface RecordedAt {
  readonly streamName: string;
  /** ESDB revision (0-based). */
  readonly revision: bigint;
  /** Log offset: commit and prepare position of an event written by a gRPC append. */
  readonly position: bigint;
  readonly created?: Date;
}

/**
 * What @eventstore/db-client hands back for `written` once stored: JSON data and metadata have
 * made a round trip through JSON, as they do on the wire (see the client's convertGrpcEvent).
 */
export function recordedEvent(written: EventData, at: RecordedAt): AllStreamRecordedEvent {
  const json = (value: unknown) => (value === undefined ? undefined : JSON.parse(JSON.stringify(value)));
  const isJson = written.contentType === 'application/json';
  return {
    streamId: at.streamName,
    id: written.id,
    isJson,
    revision: at.revision,
    type: written.type,
    created: at.created ?? new Date('2025-01-02T03:04:05.678Z'),
    data: isJson ? json(written.data) : written.data,
    metadata: json(written.metadata),
    position: { commit: at.position, prepare: at.position },
  } as AllStreamRecordedEvent;
}
