export * from './service-metrics';
export * from './readiness';
export * from './instrumented-event-store';
export * from './instrumented-bus';
export * from './instrumented-model-provider';
export * from './task-event-metrics';
