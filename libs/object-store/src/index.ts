export * from './object-store.port';
export * from './object-key';
export * from './object-store.config';
// The MinIO store is left out: createObjectStore loads it when chosen.
