export * from './model-provider.port';
export * from './model-provider.tokens';
export * from './model-provider.errors';
export * from './not-configured.provider';
export * from './model-provider.config';
export * from './pricing/model-prices';
