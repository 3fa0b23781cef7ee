export * from './event-store.port';
export * from './event-store.tokens';
export * from './event-store.errors';
export * from './event-store.config';
export * from './append-notifications';
