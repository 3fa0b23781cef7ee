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

/**
 * The embedded store's directory holds the PGlite database of a version before SQLite. Its events
 * are imported once by `npm run migrate:pglite`, not by the service, which would otherwise have to
 * ship PGlite (docs/operations/deployment.md "Upgrading from a PGlite data directory").
 */
export class PgliteDataNotMigratedError extends Error {
  readonly code = 'EVENT_STORE.PGLITE_NOT_MIGRATED';
  constructor(readonly dataDir: string) {
    super(
      `${dataDir} holds the PGlite event store of an earlier version: stop the service, run \`npm run migrate:pglite -- ${dataDir}\` ` +
        'once (it imports the events into SQLite and moves the PGlite files aside), then start again',
    );
    this.name = 'PgliteDataNotMigratedError';
  }
}
