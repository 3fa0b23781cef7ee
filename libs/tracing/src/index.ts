export * from './tracing.config';
export * from './start-tracing';
export * from './tracing.module';
export * from './spans';
export * from './traced-bus';
export * from './traced-model-provider';
