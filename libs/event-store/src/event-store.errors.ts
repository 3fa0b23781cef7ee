import type { ExpectedRevision } from './event-store.port';

// The event store's errors, every adapter's. Codes are EVENT_STORE.<CONDITION> (see ErrorCode in libs/common).

export class EventStoreClosedError extends Error {
  readonly code = 'EVENT_STORE.CLOSED';
  constructor() {
    super('event store is closed');
    this.name = 'EventStoreClosedError';
  }
}

export class ExpectedRevisionConflictError extends Error {
  readonly code = 'EVENT_STORE.EXPECTED_REVISION_CONFLICT';
  constructor(
    readonly streamId: string,
    readonly expected: ExpectedRevision,
    readonly actual: number,
  ) {
    super(`stream ${streamId}: expected revision ${String(expected)}, actual ${actual}`);
    this.name = 'ExpectedRevisionConflictError';
  }
}

/**
 * An event under our stream prefix that this adapter cannot turn into a StoredEvent: written by
 * another tool, or by a server that does not report what the port needs (see esdb-event-mapping.ts).
 */
export class UnreadableStoredEventError extends Error {
  readonly code = 'EVENT_STORE.UNREADABLE_EVENT';
  constructor(
    readonly where: string,
    reason: string,
  ) {
    super(`EventStoreDB event ${where}: ${reason}`);
    this.name = 'UnreadableStoredEventError';
  }
}
