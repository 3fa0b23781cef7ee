export * from './coordination.port';
export * from './coordination.config';
export * from './in-memory/in-memory-coordination-store';
export * from './nats/nats-coordination-store';
