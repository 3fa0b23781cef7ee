export * from './coordination.port';
export * from './coordination.config';
export * from './in-memory/in-memory-coordination-store';
// The NATS store is left out: createCoordinationStore loads it when chosen.
