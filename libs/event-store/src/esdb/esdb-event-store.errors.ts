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
