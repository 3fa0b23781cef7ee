export * from './search-provider.port';
export * from './search-provider.config';
