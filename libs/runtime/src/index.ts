export * from './runtime.module';
export * from './runtime.tokens';
export * from './start-worker-service';
export * from './bus-append-notifications';
export * from './logging/log-level';
export * from './logging/log-format';
export * from './logging/service-logger';
export * from './object-store-readiness';
