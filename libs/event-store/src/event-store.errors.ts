export class EventStoreClosedError extends Error {
  readonly code = 'EVENT_STORE.CLOSED';
  constructor() {
    super('event store is closed');
    this.name = 'EventStoreClosedError';
  }
}
