export * from './bus.port';
export * from './bus.tokens';
export * from './in-process/in-process-bus';
