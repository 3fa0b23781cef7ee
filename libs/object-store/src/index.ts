export * from './object-store.port';
export * from './object-key';
export * from './object-store.config';
export * from './local/local-object-store';
// The MinIO store is left out: createObjectStore loads it when chosen.
