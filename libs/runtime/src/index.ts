export * from './runtime.module';
export * from './runtime.tokens';
export * from './start-worker-service';
export * from './bus-append-notifications';
export * from './log-levels';
export * from './object-store-readiness';
export * from './graceful-shutdown';
