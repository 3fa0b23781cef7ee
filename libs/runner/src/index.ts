export * from './durable-runner.port';
export * from './runner.config';
// The Temporal runner and its activities are left out: createDurableRunner loads them when chosen.
export * from './runner.errors';
export * from './schedule-clock.port';
export * from './temporal-logging';
