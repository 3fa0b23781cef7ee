export * from './runtime.module';
export * from './runtime.tokens';
