export * from './tracing.config';
export * from './start-tracing';
export * from './tracing.module';
export * from './spans';
export * from './gen-ai';
export * from './traced-bus';
export * from './traced-model-provider';
