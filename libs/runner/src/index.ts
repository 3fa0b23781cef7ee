export * from './durable-runner.port';
export * from './runner.config';
export * from './in-process/in-process-runner';
export * from './temporal/activities';
export * from './temporal/temporal-runner';
