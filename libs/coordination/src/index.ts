export * from './coordination.port';
export * from './coordination.config';
// The NATS store is left out: createCoordinationStore loads it when chosen.
