export * from './durable-runner.port';
export * from './in-process/in-process-runner';
